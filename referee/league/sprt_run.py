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

from referee.core.outcomes import GameOutcome, MatchSettings
from referee.core.schedule import ScheduledGame, block_games, derive_seed
from referee.core.specs import BotSpec
from referee.match.unit import play_unit
from referee.ratings.sprt import Sprt, SprtState

if TYPE_CHECKING:
    from referee.shell.remote import RemoteSeats

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
    state = sprt.start()
    games_started = 0
    played = 0
    halves: dict[int, list[float]] = {}
    forfeits: dict[str, dict[str, int]] = {}
    stopped: str | None = None
    voided: set[int] = set()  # deals with a voided game: their pairs are left out

    def schedule() -> Iterator[ScheduledGame]:
        nonlocal games_started
        deal = 0
        while True:
            for game in block_games((new.name, old.name), deal, derive_seed(seed, "deal", deal)):
                if state.status() != "continue" or games_started >= max_games or stopped:
                    return
                games_started += 1
                yield game
            deal += 1

    def record(outcome: GameOutcome) -> None:
        nonlocal state, played, stopped
        played += 1
        if outcome.voided:
            voided.add(outcome.game.deal)
            halves.pop(outcome.game.deal, None)
            if on_game is not None:
                on_game(outcome)
            return
        for s in outcome.seats:
            if s.forfeit is not None:
                counts = forfeits.setdefault(s.bot, {})
                reason = str(s.forfeit.reason)
                counts[reason] = counts.get(reason, 0) + 1
        lost = sum(forfeits.get(new.name, {}).values())
        if max_forfeits is not None and lost > max_forfeits and stopped is None:
            stopped = (f"{new.name} (NEW) forfeited {lost} games, more than the"
                       f" {max_forfeits} allowed (--max-forfeits)")
        if on_game is not None:
            on_game(outcome)
        if outcome.game.deal in voided:
            return
        scores = halves.setdefault(outcome.game.deal, [])
        scores.append(game_score(outcome, new.name))
        if len(scores) == 2 and state.status() == "continue":
            state = state.add_pair(scores[0], scores[1])
            del halves[outcome.game.deal]
            if on_pair is not None:
                on_pair(state)

    shared = schedule()
    async with trio.open_nursery() as nursery:
        for worker in range(max(1, concurrency)):
            nursery.start_soon(
                functools.partial(
                    play_unit, shared, [new, old], settings, record, f"sprt-{worker}",
                    remote=remote,
                )
            )
    return SprtOutcome(state, played, forfeits, stopped, len(voided))


__all__ = ["EXIT_CAP", "EXIT_FORFEITS", "EXIT_H0", "EXIT_H1", "FORFEITS", "SprtOutcome",
           "run_sprt"]
