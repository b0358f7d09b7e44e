// Your bot's brain: choose(view, legal) returns the index of one of the legal actions.
//
// `view` is what your seat sees (PROTOCOL.md section 7): your `hand`, every seat's
// `hand_sizes`, the `leading_card`, the current `color`, the `phase` and the `events`
// since your last request. `legal` lists every legal action exactly once (section 6).
//
// The strategy below is simple and works: break every +3 you can, answer +2 chains,
// play before drawing, get rid of the color you hold the most of, keep the wild cards
// for later, and name your longest color with a Change Color. Replace it with yours.
import { Action, Card, View } from "./protocol";

/** "red:5" -> ["red", "5"]; "king" -> [null, "king"] */
function split(card: Card): [string | null, string] {
  const i = card.lastIndexOf(":");
  return i < 0 ? [null, card] : [card.slice(0, i), card.slice(i + 1)];
}

function score(action: Action, view: View, colors: Map<string, number>): number {
  switch (action.kind) {
    case "break":
      return 100;
    case "play_combo":
      return 50;
    case "draw":
      return -100;
    case "play":
      break;
    default:
      return 0; // pass, end_turn, close_run, leave_run_open (and kinds of later revisions)
  }
  const [color, figure] = split(action.card ?? "");
  if (view.pending_draw > 0) return figure === "+2" || figure === "+3" ? 60 : 40;
  if (figure === "+3_breaker") return -20; // in your own turn it makes you draw 3
  if (color === null) return view.hand.length <= 2 ? 30 : 5; // keep wild cards for the end
  return 10 + (colors.get(color) ?? 0) + (/^[0-9]+$/.test(figure) ? 1 : 0);
}

export function choose(view: View, legal: Action[]): number {
  const colors = new Map<string, number>();
  for (const card of view.hand) {
    const [color] = split(card);
    if (color !== null) colors.set(color, (colors.get(color) ?? 0) + 1);
  }
  let best = 0;
  legal.forEach((action, i) => {
    if (score(action, view, colors) > score(legal[best], view, colors)) best = i;
  });
  if (legal[best].card === "change_color" && colors.size > 0) {
    const wanted = [...colors.entries()].sort((a, b) => b[1] - a[1])[0][0];
    const i = legal.findIndex((a) => a.card === "change_color" && a.color === wanted);
    if (i >= 0) return i;
  }
  return best;
}
