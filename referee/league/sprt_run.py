"""SPRT regression runs: heads-up duplicate pairs until the test decides.

Each pair is one deal played twice with the seats swapped; the candidate's two game
scores make one pentanomial outcome (docs/ratings.md gives the model). Games run on
``concurrency`` workers that draw the next game from one shared schedule, which stops
as soon as the SPRT accepts a hypothesis or the game cap is reached.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import attrs
import trio

from referee.core import (
    BotSpec,
    GameOutcome,
    MatchSettings,
    ScheduledGame,
    block_games,
    derive_seed,
)
from referee.match import play_unit
from referee.ratings import Sprt, SprtState

if TYPE_CHECKING:
    from referee.shell import RemoteSeats

EXIT_H1 = 0
EXIT_H0 = 1
EXIT_CAP = 3
#: A NEW that forfeited too many games fails the gate as H0 does: it is not stronger.
EXIT_FORFEITS = 1
#: The status of a run that NEW's forfeits stopped (``max_forfeits``).
FORFEITS = "forfeits"


@attrs.frozen
class SprtOutcome:
    state: SprtState
    games: int
    forfeits: dict[str, dict[str, int]]
    #: Why the run stopped before the test decided (NEW's forfeits), if it did.
    stopped: str | None = None
    #: Games voided by infrastructure faults every time they were played: their pairs
    #: are left out of the test.
    voided: int = 0

    @property
    def status(self) -> str:
        """``H1``, ``H0``, ``continue`` (the game cap was reached) or ``forfeits``."""
        return FORFEITS if self.stopped is not None else self.state.status()

    @property
    def exit_code(self) -> int:
        return {"H1": EXIT_H1, "H0": EXIT_H0, FORFEITS: EXIT_FORFEITS}.get(
            self.status, EXIT_CAP)


def game_score(outcome: GameOutcome, bot: str) -> float:
    """1 for a heads-up win, 0 for a loss, 0.5 for a shared place."""
    mine = next(s.place for s in outcome.seats if s.bot == bot)
    other = next(s.place for s in outcome.seats if s.bot != bot)
    return 1.0 if mine < other else 0.0 if mine > other else 0.5


@attrs.define
class _Gate:
    """One SPRT run's bookkeeping: the shared schedule the workers draw from and what
    each finished game adds to the test."""

    new: str
    old: str
    state: SprtState
    max_games: int
    seed: int
    max_forfeits: int | None
    on_pair: Callable[[SprtState], None] | None
    on_game: Callable[[GameOutcome], None] | None
    games_started: int = 0
    played: int = 0
    halves: dict[int, list[float]] = attrs.field(factory=dict)
    forfeits: dict[str, dict[str, int]] = attrs.field(factory=dict)
    stopped: str | None = None
    #: Deals with a voided game: their pairs are left out.
    voided: set[int] = attrs.field(factory=set)

    def schedule(self) -> Iterator[ScheduledGame]:
        """Duplicate pairs, deal after deal, until the test decides, the game cap is
        reached or NEW's forfeits stop the run."""
        deal = 0
        while True:
            for game in block_games((self.new, self.old), deal,
                                    derive_seed(self.seed, "deal", deal)):
                if (self.state.status() != "continue" or self.games_started >= self.max_games
                        or self.stopped):
                    return
                self.games_started += 1
                yield game
            deal += 1

    def record(self, outcome: GameOutcome) -> None:
        """Count a finished game: a voided one drops its pair, a played one counts its
        forfeits and its half of its pair."""
        self.played += 1
        if outcome.voided:
            self.voided.add(outcome.game.deal)
            self.halves.pop(outcome.game.deal, None)
            if self.on_game is not None:
                self.on_game(outcome)
            return
        self._count_forfeits(outcome)
        if self.on_game is not None:
            self.on_game(outcome)
        if outcome.game.deal not in self.voided:
            self._score(outcome)

    def _count_forfeits(self, outcome: GameOutcome) -> None:
        """Tally the game's forfeits by bot and reason; stop the run when NEW's pass
        ``max_forfeits``."""
        for s in outcome.seats:
            if s.forfeit is not None:
                counts = self.forfeits.setdefault(s.bot, {})
                reason = str(s.forfeit.reason)
                counts[reason] = counts.get(reason, 0) + 1
        lost = sum(self.forfeits.get(self.new, {}).values())
        if self.max_forfeits is not None and lost > self.max_forfeits and self.stopped is None:
            self.stopped = (f"{self.new} (NEW) forfeited {lost} games, more than the"
                            f" {self.max_forfeits} allowed (--max-forfeits)")

    def _score(self, outcome: GameOutcome) -> None:
        """NEW's score in the game; the second half of a pair goes to the test."""
        scores = self.halves.setdefault(outcome.game.deal, [])
        scores.append(game_score(outcome, self.new))
        if len(scores) == 2 and self.state.status() == "continue":
            self.state = self.state.add_pair(scores[0], scores[1])
            del self.halves[outcome.game.deal]
            if self.on_pair is not None:
                self.on_pair(self.state)


async def run_sprt(
    new: BotSpec,
    old: BotSpec,
    sprt: Sprt,
    settings: MatchSettings,
    *,
    max_games: int,
    seed: int = 0,
    concurrency: int = 1,
    on_pair: Callable[[SprtState], None] | None = None,
    on_game: Callable[[GameOutcome], None] | None = None,
    max_forfeits: int | None = None,
    remote: RemoteSeats | None = None,
) -> SprtOutcome:
    """Play duplicate pairs until the SPRT decides or ``max_games`` were started. With a
    remote bot (over its connection to ``remote``) the games are played one at a time,
    whatever ``concurrency`` says: the bot has one connection.

    When NEW forfeits more than ``max_forfeits`` games, no further game starts and the
    outcome says so (status ``forfeits``): a gate must not call a NEW that keeps
    crashing merely undecided."""
    if new.name == old.name:
        raise ValueError(f"NEW and OLD need different names (both are {new.name!r})")
    if new.remote or old.remote:
        concurrency = 1
    gate = _Gate(new.name, old.name, sprt.start(), max_games, seed, max_forfeits,
                 on_pair, on_game)
    shared = gate.schedule()
    async with trio.open_nursery() as nursery:
        for worker in range(max(1, concurrency)):
            nursery.start_soon(
                functools.partial(
                    play_unit, shared, [new, old], settings, gate.record, f"sprt-{worker}",
                    remote=remote,
                )
            )
    return SprtOutcome(gate.state, gate.played, gate.forfeits, gate.stopped, len(gate.voided))


__all__ = ["EXIT_CAP", "EXIT_FORFEITS", "EXIT_H0", "EXIT_H1", "FORFEITS", "SprtOutcome",
           "run_sprt"]
