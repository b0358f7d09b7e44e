"""What a game is refereed by and what came of it, as plain values: the settings of a
match, and each game's outcome with its seats' places, points, forfeits, time use and
logs. The game loop (``referee.match``) makes them; the league's store, the command
line's tables and the executors' messages carry them. No I/O.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from referee.core.bounds import at_least, between
from referee.core.clock import TimeControl
from referee.core.fairness import STARVED_WAIT_CAP, InfraEvent
from referee.core.faults import FaultPolicy, FaultReason
from referee.core.schedule import ScheduledGame
from referee.core.series import SeriesGame
from referee.core.time_use import TimeUse
from referee.rules import EndReason, Rules

__all__ = ["GameOutcome", "MatchSettings", "SeatForfeit", "SeatOutcome"]


@attrs.frozen
class SeatForfeit:
    """Why a seat forfeited: the typed reason and the full detail (which may hold the
    bot's stderr: the bots are told a short one)."""

    reason: FaultReason = attrs.field(converter=FaultReason)
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {"reason": str(self.reason), "detail": self.detail}


@attrs.frozen
class MatchSettings:
    """How games are refereed: what a league file's ``[league]`` (with its ``[time]`` and
    ``[rules]``), a match's options, a ladder and the finals each hold as one value."""

    rules: Rules = attrs.field(factory=Rules)
    time: TimeControl = attrs.field(factory=TimeControl)
    #: "forfeit": any fault forfeits. "strikes": a timeout or an illegal answer plays a
    #: default action and counts a strike; the ``strikes``-th strike forfeits.
    fault_policy: FaultPolicy = attrs.field(
        default=FaultPolicy.FORFEIT, converter=FaultPolicy
    )
    strikes: int = attrs.field(default=3, validator=at_least(1))
    #: Restart a bot that crashed or forfeited, for the next game.
    restart: bool = True
    replay_dir: Path | None = None
    #: When set, replays are written only of the games this bot lost (an SPRT gate
    #: keeps what its candidate got wrong, not thousands of games).
    replays_lost_by: str | None = None
    log_dir: Path | None = None
    #: Keep a bot process's stderr log that stayed empty (False: a process that wrote
    #: nothing to stderr leaves no file; a season's ladder starts millions of them).
    empty_logs: bool = True
    #: The master seed the deals come from, written into every replay (never sent to
    #: a bot) so that the whole run can be repeated; None when the caller has none.
    master_seed: int | None = None
    #: How many times a game voided by an infrastructure fault is played again (same
    #: deal, same seats, fresh processes); past that it is stored as voided.
    void_replays: int = attrs.field(default=2, validator=at_least(0))
    #: How long a wait (a request under the wall basis, a bot's start) whose bot the
    #: machine starves is extended, at most, in multiples of its deadline
    #: (``referee.core.fairness``); 1: never, a starved timeout voids at once.
    starved_cap: int = attrs.field(default=STARVED_WAIT_CAP, validator=between(1, 1000))


@attrs.frozen
class SeatOutcome:
    seat: int
    bot: str
    place: int
    points: int
    forfeit: SeatForfeit | None = None
    #: The seat's answer times in this game.
    time: TimeUse = attrs.field(factory=TimeUse)
    #: The stderr log of the seat's bot process, when it was kept (with the match
    #: settings' ``empty_logs`` off, an empty one is gone once its process ended).
    log: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "seat": self.seat,
            "place": self.place,
            "points": self.points,
            "forfeit": None if self.forfeit is None else self.forfeit.to_json(),
            "time_ms": self.time.to_json(),
            "log": None if self.log is None else str(self.log),
        }


@attrs.frozen
class GameOutcome:
    game: ScheduledGame
    seats: tuple[SeatOutcome, ...]
    actions: int
    reason: EndReason | None
    replay: Path | None
    #: The winning seat, if a seat won (R22).
    winner: int | None = None
    #: The infrastructure faults that voided earlier plays of the game (or all of them).
    infra: tuple[InfraEvent, ...] = ()
    #: The game was voided as often as the settings allow: it has no result (no seats).
    voided: bool = False

    def series_game(self) -> SeriesGame:
        """What a series needs of this game (``referee.core.series``)."""
        seats = sorted(self.seats, key=lambda s: s.seat)
        return SeriesGame(self.game.game_id, self.game.block, tuple(s.bot for s in seats),
                          tuple(s.points for s in seats), self.winner,
                          frozenset(s.seat for s in seats if s.forfeit is not None))

    def to_json(self) -> dict[str, Any]:
        return {
            "game_id": self.game.game_id,
            "seed": self.game.seed,
            "players": [s.to_json() for s in self.seats],
            "actions": self.actions,
            "end": self.reason,
            "replay": None if self.replay is None else str(self.replay),
            "voided": self.voided,
            "infra": [e.to_json() for e in self.infra],
        }
