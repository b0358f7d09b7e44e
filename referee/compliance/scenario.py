"""What a compliance scenario is: a position, the bot's seat in it, what the other seats
do, and which requests the bot must be sent there.

The other seats are the *house*: the referee plays them itself, from the scenario's
script and then by a fixed policy, so that a scenario plays out the same way for every
bot until the bot's own choices differ. Everything here is pure (no I/O, no clock).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from referee.rules import REACT, Action, GameState
from referee.rules import actions as A

__all__ = ["Asked", "Scenario", "house_action"]


@attrs.frozen
class Asked:
    """A request the bot must be sent in its scenario: its type, the view's phase, and
    the action kinds its ``legal`` list holds (all of ``kinds``; with ``exactly``, no
    other)."""

    request: str
    phase: str
    kinds: tuple[str, ...] = ()
    exactly: bool = False

    def matches(self, message_type: str, view: Mapping[str, Any],
                legal: Sequence[Mapping[str, Any]]) -> bool:
        if message_type != self.request or view.get("phase") != self.phase:
            return False
        offered = {entry.get("kind") for entry in legal}
        if self.exactly:
            return offered == set(self.kinds)
        return set(self.kinds) <= offered

    def describe(self) -> str:
        text = f"a {self.request} in phase {self.phase!r}"
        if self.kinds:
            which = "exactly" if self.exactly else "with"
            text += f" {which} {', '.join(self.kinds)}"
        return text


@attrs.frozen
class Scenario:
    """One situation of the compliance run, played as a real game against the bot."""

    #: A stable name, shown in the output and usable with ``--scenario``.
    name: str
    #: What part of the protocol it exercises: "decide", "react", "last card", ...
    group: str
    #: What the bot faces, in one line.
    summary: str
    #: Builds the game's starting position (its rules travel with it).
    start: Callable[[], GameState]
    #: The bot's seat; every other seat is played by the house.
    seat: int = 0
    #: The house's first moves, by seat, each played when that seat is to act and the
    #: move is legal; after its script a house seat plays by :func:`house_action`.
    script: Mapping[int, tuple[Action, ...]] = attrs.field(factory=dict)
    #: Requests the bot must be sent, or the scenario did not reach its situation.
    asked: tuple[Asked, ...] = ()
    #: The bot's time bank is empty from the start (no per-move cap, no increment), so
    #: every decision it is sent has ``deadline_ms`` 0.
    empty_bank: bool = False
    #: The bot has a time bank (the time control's, or a 60 s one): every request's
    #: ``time_left_ms`` is the bank, far above the ``deadline_ms`` it must keep to.
    bank: bool = False


def house_action(state: GameState, seat: int, script: list[Action]) -> Action:
    """The move of a house seat: its next scripted move when that is legal now (it is
    then taken off ``script``), else it passes a +3 Breaker window and otherwise plays
    its first legal action."""
    legal = state.legal_actions(seat)
    if script and script[0] in legal:
        return script.pop(0)
    if state.phase == REACT:
        return A.PASS_ACTION
    return legal[0]
