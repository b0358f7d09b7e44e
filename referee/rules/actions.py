"""Actions: the atomic decisions a seat makes.

A turn is a sequence of actions (play a card, continue or end a TAKI run, play again
after a Plus or a King, draw), so each legal list stays short. Actions are small frozen
values; the engine hands out shared instances, so comparing them is cheap.
"""

from __future__ import annotations

from typing import Any

import attrs

from . import cards

PLAY = 0
DRAW = 1
END_TURN = 2
CLOSE_RUN = 3
LEAVE_RUN_OPEN = 4
BREAK = 5
PASS = 6
PLAY_COMBO = 7

KIND_NAMES: tuple[str, ...] = (
    "play",
    "draw",
    "end_turn",
    "close_run",
    "leave_run_open",
    "break",
    "pass",
    "play_combo",
)


@attrs.frozen(repr=False)
class Action:
    """One decision. ``card`` is a card code for plays, ``color`` the color named by a
    Change Color (or the color of an old-rule 3+Plus combo), ``count`` the number of
    cards a draw takes."""

    kind: int
    card: int = -1
    color: int = -1
    count: int = 0

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": KIND_NAMES[self.kind]}
        if self.kind == PLAY:
            out["card"] = cards.NAMES[self.card]
            if self.card == cards.CHANGE_COLOR:
                out["color"] = cards.COLORS[self.color]
        elif self.kind == PLAY_COMBO:
            out["color"] = cards.COLORS[self.color]
        elif self.kind == DRAW:
            out["count"] = self.count
        return out

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Action:
        """Parse the wire form; raises ValueError when it names no possible action."""
        try:
            kind = KIND_NAMES.index(data["kind"])
        except (KeyError, ValueError, TypeError):
            raise ValueError(f"not an action: {data!r}") from None
        if kind == PLAY:
            code = cards.parse(data.get("card", ""))
            if code == cards.CHANGE_COLOR:
                return play(code, color=cards.parse_color(data.get("color", "")))
            return play(code)
        if kind == PLAY_COMBO:
            return combo(cards.parse_color(data.get("color", "")))
        if kind == DRAW:
            return draw(int(data.get("count", 1)))
        return _SIMPLE[kind]

    def __str__(self) -> str:
        wire = self.to_wire()
        kind = wire.pop("kind")
        return " ".join([kind, *(str(v) for v in wire.values())])

    def __repr__(self) -> str:
        return f"Action({self})"


def _make_plays() -> dict[tuple[int, int], Action]:
    table = {}
    for code in range(cards.CARD_COUNT):
        if code == cards.CHANGE_COLOR:
            for color in range(4):
                table[code, color] = Action(PLAY, code, color=color)
        else:
            table[code, -1] = Action(PLAY, code)
    return table


_PLAYS = _make_plays()
#: The plain play of each card code (``None`` for the Change Color, which names a color).
PLAY_CARD: tuple[Action | None, ...] = tuple(_PLAYS.get((c, -1)) for c in range(cards.CARD_COUNT))
#: The four Change Color plays, one per named color.
CHANGE_COLOR_PLAYS: tuple[Action, ...] = tuple(_PLAYS[cards.CHANGE_COLOR, c] for c in range(4))
COMBOS: tuple[Action, ...] = tuple(Action(PLAY_COMBO, color=c) for c in range(4))
END_TURN_ACTION = Action(END_TURN)
CLOSE_RUN_ACTION = Action(CLOSE_RUN)
LEAVE_RUN_OPEN_ACTION = Action(LEAVE_RUN_OPEN)
BREAK_ACTION = Action(BREAK)
PASS_ACTION = Action(PASS)
_SIMPLE = {
    END_TURN: END_TURN_ACTION,
    CLOSE_RUN: CLOSE_RUN_ACTION,
    LEAVE_RUN_OPEN: LEAVE_RUN_OPEN_ACTION,
    BREAK: BREAK_ACTION,
    PASS: PASS_ACTION,
}
_DRAWS: dict[int, Action] = {}


def play(code: int, *, color: int = -1) -> Action:
    """The action that plays ``code`` (with the named color for a Change Color)."""
    try:
        return _PLAYS[code, color]
    except KeyError:
        raise ValueError(
            f"no play of {cards.NAMES[code] if 0 <= code < cards.CARD_COUNT else code!r} "
            f"with color={color}"
        ) from None


def draw(count: int) -> Action:
    """The draw of ``count`` cards (1, or the total of an active +2 chain)."""
    action = _DRAWS.get(count)
    if action is None:
        if count < 1:
            raise ValueError(f"a draw takes at least one card, not {count}")
        action = _DRAWS[count] = Action(DRAW, count=count)
    return action


def combo(color: int) -> Action:
    return COMBOS[color]
