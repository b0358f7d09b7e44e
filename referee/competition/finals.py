"""The finals of a competition: a full round robin among each participant's latest bot,
then the final standings.

The finals are a league (``referee.league.runner.run_league``) in a database of their
own: every table of ``table_size`` bots plays ``deals`` deals at every seat rotation,
each rotation by fresh bot processes, so the standings owe nothing to who met whom on
the ladder. Run again after a kill, they play only the games missing. The standings are
the full fit of ``referee.ratings`` with bootstrap intervals, written as JSON; the
report of the finals database is ``taki-referee report`` (``referee.present.report``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import trio

from referee.competition.ladder_control import GameLanded
from referee.config import LeagueConfig, available_cpus
from referee.core import BotSpec, GameOutcome, MatchSettings, write_atomically
from referee.league import ResultStore, league_executor, play_league, rated_games
from referee.ratings import RatingModel, rate

__all__ = ["FinalStanding", "FinalsSettings", "run_finals"]


@attrs.frozen
class FinalsSettings:
    """How the finals are played (the fields as in ``LadderSettings``)."""

    deals: int = 10
    table_size: int = 2
    #: How the games are refereed (the master seed is the finals': ``seed``; the bots'
    #: logs go to ``match.log_dir``).
    match: MatchSettings = attrs.field(factory=MatchSettings)
    seed: int | None = None
    concurrency: int = attrs.field(factory=available_cpus)
    workers: int | None = None
    dask: str | None = None
    rating_model: RatingModel | None = None
    #: Bootstrap resamples of the standings' intervals.
    resamples: int = 200


@attrs.frozen
class FinalStanding:
    """A bot's final place: by its Elo, with its 95% interval (None without one)."""

    place: int
    bot: str
    elo: float
    low: float | None
    high: float | None
    games: int
    #: Its share of the pairwise points.
    score: float

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _count(db: Path) -> int:
    """The games a finals database holds (none yet: 0)."""
    if not db.exists() or db.stat().st_size == 0:
        return 0
    with ResultStore(db, readonly=True) as store:
        return store.game_count()


def _standings(db: Path, settings: FinalsSettings) -> tuple[FinalStanding, ...]:
    with ResultStore(db, readonly=True) as store:
        games = rated_games(store)
    if not games:
        return ()
    report = rate(games, resamples=settings.resamples, model=settings.rating_model)
    return tuple(
        FinalStanding(place, b.name, b.elo, None if b.ci95 is None else b.ci95[0],
                      None if b.ci95 is None else b.ci95[1], b.games, b.score)
        for place, b in enumerate(report.bots, 1)
    )


async def run_finals(
    db: Path,
    bots: Sequence[BotSpec],
    settings: FinalsSettings,
    standings_path: Path,
    *,
    on_game: Callable[[GameLanded], None] | None = None,
) -> tuple[FinalStanding, ...]:
    """Play the finals of ``bots`` into the database ``db`` (of the finals alone; every
    bot is started once first, as a league does), write the standings to
    ``standings_path`` (JSON, in one piece) and return them. ``on_game`` hears of every
    stored game, on the Trio thread. A second call with the same bots and settings plays
    only the games missing (after a kill, say). BotCheckError (in a group) when a bot
    cannot start; StoreError when the database cannot be used."""
    if len(bots) < settings.table_size:
        raise ValueError(f"the finals need at least {settings.table_size} bots,"
                         f" got {len(bots)}")
    config = LeagueConfig(
        path=db, bots=tuple(bots), table_size=settings.table_size,
        deals=settings.deals, seed=settings.seed, concurrency=settings.concurrency,
        match=settings.match, rating_model=settings.rating_model,
    )
    executor = league_executor(config, workers=settings.workers, dask=settings.dask)
    stored = await trio.to_thread.run_sync(_count, db)

    def landed(outcome: GameOutcome) -> None:
        nonlocal stored
        stored += 1
        if on_game is not None and not outcome.voided:  # a voided game has no result
            seats = sorted(outcome.seats, key=lambda s: s.seat)
            event = GameLanded(outcome.game.game_id, tuple(s.bot for s in seats),
                               tuple(s.place for s in seats), stored)
            trio.from_thread.run_sync(on_game, event)

    await play_league(config, db, executor=executor, log_dir=settings.match.log_dir,
                      on_game=landed)
    standings = await trio.to_thread.run_sync(_standings, db, settings)
    text = json.dumps({"standings": [s.to_json() for s in standings]}, indent=2) + "\n"
    await trio.to_thread.run_sync(
        lambda: write_atomically(standings_path, text, what="standings", make_parents=True))
    return standings
