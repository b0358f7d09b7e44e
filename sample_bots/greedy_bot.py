"""A heuristic Super Taki bot: plays its longest color, saves wild cards for emergencies,
answers +2 chains, runs TAKIs to the end on an action card, breaks every +3 it can and
always declares "last card".

    python sample_bots/greedy_bot.py
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from taki_protocol import run_bot

Map = dict[str, Any]

# Inside a run: numbers go first, the action card that should act goes last.
RUN_ORDER = {"taki": 29, "change_direction": 28, "stop": 27, "+2": 26, "plus": 25}


def split(card: str) -> tuple[str | None, str]:
    color, _, figure = card.rpartition(":")
    return (color or None), figure


def color_counts(hand: list[str]) -> Counter[str]:
    return Counter(color for color, _ in map(split, hand) if color)


def incoming_hand_size(view: Map) -> int:
    """The size of the hand a Crazy Card would pass to this seat: the one of the
    previous seat still in the game."""
    sizes, active, players = view["hand_sizes"], view["active"], len(view["hand_sizes"])
    seat = view["seat"]
    for _ in range(players - 1):
        seat = (seat - view["direction"]) % players
        if active[seat]:
            return int(sizes[seat])
    return 0


#: What the actions that play no card are worth.
FIXED_SCORES = {"break": 100, "pass": 0, "leave_run_open": 0, "close_run": 1,
                "play_combo": 50, "end_turn": -50}


def score(action: Map, view: Map, counts: Counter[str]) -> float:
    kind = action["kind"]
    if kind in FIXED_SCORES:
        return FIXED_SCORES[kind]
    if kind == "draw":
        return -10 * action["count"]
    color, figure = split(action["card"])
    if view["pending_draw"]:
        return {"+2": 50, "+3": 45}.get(figure, 5 if figure == "king" else 0)
    if view["phase"] == "run":
        if color is None:
            return -20 if figure != "super_taki" else -10
        return RUN_ORDER.get(figure, 30)
    if color is None:
        return special_score(figure, view, counts)
    return color_score(figure, counts[color], view)


def special_score(figure: str, view: Map, counts: Counter[str]) -> float:
    """A card of no color played outside a run: wild cards are saved for when
    the hand is nearly empty."""
    if figure == "+3":
        return 40
    if figure == "change_color":
        return -5 if len(view["hand"]) > 2 else 20
    if figure == "super_taki":
        return -8 + 4 * counts.get(view["color"], 0)
    if figure == "king":
        return -10 if len(view["hand"]) > 2 else 20
    if figure == "+3_breaker":
        return -30
    assert figure == "crazy", figure
    # Every hand moves on one seat: worth it when the hand coming in is smaller.
    return 10 * (len(view["hand"]) - 1 - incoming_hand_size(view))


def color_score(figure: str, same_color: int, view: Map) -> float:
    """A colored card played outside a run: the longer its color, the better."""
    opponents_low = min(
        (n for seat, n in enumerate(view["hand_sizes"]) if seat != view["seat"] and n),
        default=8,
    ) <= 2
    base = 3 * same_color
    if figure == "taki":
        return base + 5 * same_color
    if figure in ("+2", "stop"):
        return base + (14 if opponents_low else 8)
    if figure == "plus":
        return base + (12 if same_color > 1 else -2)
    if figure == "change_direction":
        return base + 4
    return base + 6 + int(figure) / 10  # shed high numbers first


def choose(view: Map, legal: list[Map]) -> tuple[int, bool]:
    counts = color_counts(view["hand"])
    best = max(range(len(legal)), key=lambda i: score(legal[i], view, counts))
    action = legal[best]
    if action.get("card") == "change_color":
        wanted = counts.most_common(1)[0][0] if counts else action["color"]
        for i, other in enumerate(legal):
            if other.get("card") == "change_color" and other["color"] == wanted:
                best = i
    # Declaring "last card" costs nothing, so always declare.
    return best, True


if __name__ == "__main__":
    run_bot(choose, name="greedy")
