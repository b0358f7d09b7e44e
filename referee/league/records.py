"""What the results database holds, as plain values: a stored game with its seats, and a
ladder's meeting. The store (:mod:`referee.league.store`) reads and writes them; the
report, the ratings and the competition's pages read them."""

from __future__ import annotations

import attrs

from referee.core import FaultReason, InfraEvent, TimeUse
from referee.rules import EndReason

__all__ = ["GameRecord", "Meeting", "SeatRecord"]


def _fault_reason(value: str | None) -> FaultReason | None:
    return None if value is None else FaultReason(value)


def _end_reason(value: str | None) -> EndReason | None:
    return None if value is None else EndReason(value)


@attrs.frozen
class SeatRecord:
    seat: int
    bot: str
    place: int
    points: int
    forfeit_reason: FaultReason | None = attrs.field(default=None, converter=_fault_reason)
    forfeit_detail: str | None = None
    #: The seat's answer times (none for games stored before layout 2).
    time: TimeUse = attrs.field(factory=TimeUse)


@attrs.frozen
class GameRecord:
    game_id: str
    block: str
    seed: int
    actions: int
    #: Why the game ended.
    reason: EndReason | None = attrs.field(converter=_end_reason)
    seats: tuple[SeatRecord, ...]
    replay: str | None = None
    #: The infrastructure faults that voided earlier plays of the game.
    infra: tuple[InfraEvent, ...] = ()
    #: Voided every time it was played: stored without a result (no seats), never a loss.
    voided: bool = False


@attrs.frozen
class Meeting:
    """A table of a ladder: its bots (in the seats of rotation 0), and the deals they
    play at every seat rotation, ``first_deal`` onwards. Chosen and stored before its
    first game, so that a ladder restarted after a kill plays it to its end."""

    name: str
    bots: tuple[str, ...]
    first_deal: int
    deals: int
    finished: bool = False
