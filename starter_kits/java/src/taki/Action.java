package taki;

/**
 * A legal action (PROTOCOL.md section 6): {@code kind} is play, play_combo, draw, end_turn,
 * close_run, leave_run_open, break or pass; {@code card}, {@code color} and {@code count}
 * are null when the action has none.
 */
public record Action(String kind, String card, String color, Integer count) {}
