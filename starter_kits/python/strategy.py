"""Your bot's brain: ``choose(view, legal)`` picks one of the legal actions.

``view`` is what your seat sees (PROTOCOL.md section 7): your ``hand``, every seat's
``hand_sizes``, the ``leading_card``, the current ``color``, the ``phase`` and the
``events`` since your last request. ``legal`` lists every legal action exactly once
(section 6). Return the index of your choice in ``legal``.

The strategy below is simple and works: break every +3 you can, answer +2 chains,
play before drawing, get rid of the color you hold the most of, keep the wild cards
for later, and name your longest color with a Change Color. Replace it with yours.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

View = dict[str, Any]
Action = dict[str, Any]

WILD = {"change_color", "super_taki", "king", "crazy"}


def split(card: str) -> tuple[str | None, str]:
    """``"red:5"`` -> ``("red", "5")``; ``"king"`` -> ``(None, "king")``."""
    color, _, figure = card.rpartition(":")
    return (color or None), figure


def score(action: Action, view: View, colors: Counter[str]) -> float:
    kind = action["kind"]
    if kind == "break":
        return 100
    if kind == "play_combo":
        return 50
    if kind == "draw":
        return -100
    if kind != "play":
        return 0  # pass, end_turn, close_run, leave_run_open (and kinds of later revisions)
    color, figure = split(action["card"])
    if view["pending_draw"] > 0:
        return 60 if figure in ("+2", "+3") else 40  # pass the chain on rather than draw
    if figure == "+3_breaker":
        return -20  # in your own turn it makes you draw 3
    if color is None:
        return 30 if len(view["hand"]) <= 2 else 5  # keep wild cards for the end
    return 10 + colors[color] + (1 if figure.isdigit() else 0)


def choose(view: View, legal: list[Action]) -> int:
    colors = Counter(c for c, _ in map(split, view["hand"]) if c)
    best = max(range(len(legal)), key=lambda i: score(legal[i], view, colors))
    if legal[best].get("card") == "change_color" and colors:
        wanted = colors.most_common(1)[0][0]
        for i, action in enumerate(legal):
            if action.get("card") == "change_color" and action.get("color") == wanted:
                return i
    return best
