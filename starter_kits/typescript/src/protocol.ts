// The messages of protocol version 1 (protocol/PROTOCOL.md, section 4) as TypeScript types.
// Only the fields a bot reads are typed; a receiver ignores keys it does not know.

export type Card = string; // "red:5", "blue:+2", "king", "+3_breaker" (section 5)
export type Color = "red" | "green" | "blue" | "yellow";

/** A legal action (section 6). */
export interface Action {
  kind: string; // play, play_combo, draw, end_turn, close_run, leave_run_open, break, pass
  card?: Card;
  color?: Color;
  count?: number;
}

/** What the bot's seat sees (section 7). */
export interface View {
  seat: number;
  players: number;
  hand: Card[];
  hand_sizes: number[];
  active: boolean[];
  stages: number[] | null;
  leading_card: Card;
  top_card: Card;
  color: Color;
  direction: 1 | -1;
  turn: number;
  phase: "play" | "run" | "again" | "king" | "react";
  pending_draw: number;
  open_run: Color | null;
  draw_pile: number;
  discard_pile: number;
  declared_last_card: boolean;
  action_count: number;
  events: Array<{ type: string; [key: string]: unknown }>;
}

/** A decide or react request (section 4.1). */
export interface Request {
  type: "decide" | "react";
  id: number;
  view: View;
  legal: Action[];
  time_left_ms: number | null;
  deadline_ms: number;
}

/** Any message from the referee; `type` says which. */
export interface Message {
  type: string;
  [key: string]: unknown;
}
