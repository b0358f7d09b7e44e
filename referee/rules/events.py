"""What happened in a game, event by event (``GameState.events``).

Each event is a named tuple whose first field, ``kind``, names it, so events can be
read by name (``event.seat``) and still compare equal to plain tuples. The view turns
them into the wire's ``events`` (:func:`referee.rules.view.event_for`), hiding the cards
a seat may not see.
"""

from __future__ import annotations

from typing import NamedTuple, TypeAlias


class Played(NamedTuple):
    kind: str  # "play"
    seat: int
    card: int
    #: The color a Change Color named, else None.
    color: int | None


class Drew(NamedTuple):
    kind: str  # "draw"
    seat: int
    number: int  # of cards (the wire's "count"; a tuple has its own count())
    #: Why: "no_play", "chain", "plus_again", "plus3", "broken", "last_card", "stage", ...
    reason: str
    #: The cards, for the drawer's eyes only.
    cards: tuple[int, ...]


class RunEnded(NamedTuple):
    kind: str  # "run_end"
    seat: int
    closed: bool


class Staged(NamedTuple):
    kind: str  # "stage"
    seat: int
    stage: int


class ComboPlayed(NamedTuple):
    kind: str  # "play_combo"
    seat: int
    color: int


class HandsPassed(NamedTuple):
    kind: str  # "hands_passed"
    direction: int


class Reshuffled(NamedTuple):
    kind: str  # "reshuffle"
    #: The size of the new draw pile.
    draw_pile: int


class Forfeited(NamedTuple):
    kind: str  # "forfeit"
    seat: int
    reason: str


class SeatEvent(NamedTuple):
    """An event that names only a seat: "last_card", "end_turn", "skip", "break", "win"."""

    kind: str
    seat: int


Event: TypeAlias = (
    Played | Drew | RunEnded | Staged | ComboPlayed | HandsPassed | Reshuffled | Forfeited
    | SeatEvent
)
