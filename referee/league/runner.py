"""Round-robin leagues: schedule lazily, play concurrently, store every game once.

Running the same league again resumes it: games already in the database are skipped,
and the games that were in flight when the referee died are played again.

Where the games are played is up to an *executor*: :class:`LocalExecutor` plays blocks
in this process, ``referee.league.dask_executor.DaskExecutor`` on the workers of a Dask
cluster. Either way only this process writes the results database.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import AsyncIterator, Callable, Container, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

import attrs
import trio

from referee.config import LeagueConfig
from referee.core import (
    BotSpec,
    DealRun,
    GameOutcome,
    MatchSettings,
    ScheduledGame,
    WorkUnit,
    fresh_seed,
    league_units,
    sole_cause,
    total_games,
    unit_bounds,
)
from referee.league.store import GameRecord, ResultStore, SeatRecord, StoreError
from referee.match import play_unit

if TYPE_CHECKING:
    from referee.shell import RemoteSeats


def settings_for(config: LeagueConfig, log_dir: Path | None) -> MatchSettings:
    """The league's match settings for a run that keeps its logs in ``log_dir``, with
    the league's master seed (written into every replay)."""
    return attrs.evolve(config.match, log_dir=log_dir, master_seed=config.seed)


def record_of(outcome: GameOutcome) -> GameRecord:
    return GameRecord(
        game_id=outcome.game.game_id,
        block=outcome.game.block,
        seed=outcome.game.seed,
        actions=outcome.actions,
        reason=outcome.reason,
        seats=tuple(
            SeatRecord(
                seat=s.seat,
                bot=s.bot,
                place=s.place,
                points=s.points,
                forfeit_reason=None if s.forfeit is None else s.forfeit.reason,
                forfeit_detail=None if s.forfeit is None else s.forfeit.detail,
                time=s.time,
            )
            for s in outcome.seats
        ),
        replay=None if outcome.replay is None else str(outcome.replay),
        infra=outcome.infra,
        voided=outcome.voided,
    )


def league_size(config: LeagueConfig) -> int:
    return total_games(len(config.bots), config.table_size, config.deals, config.series_length)


#: The most deals of a unit of work sized by :func:`deals_per_unit` (not by
#: ``[league] deals_per_process``).
MAX_DEALS_PER_UNIT = 100
#: How many units of work the computed unit size aims at, whatever the concurrency of a
#: run. Every table and seat rotation is a unit of its own already, so a league has more
#: units than this unless it is small; a small league then starts its bots once per
#: rotation of a table rather than for every couple of games (the demo league: 6 units
#: of 6 games).
TARGET_UNITS = 6


def deals_per_unit(config: LeagueConfig) -> int:
    """How many deals of one table a unit of work plays with the same bot processes (one
    rotation of the table; ``referee.core.schedule``).

    ``[league] deals_per_process`` sets it (at most ``deals``). Otherwise: starting a bot
    costs more than a game between fast bots, so a unit plays several deals; a small
    league is cut into about :data:`TARGET_UNITS` units of even length, so that it still
    runs in parallel and a kill loses little. The size depends on the league file's bots,
    table size and deals only, never on the concurrency of a run: the units, hence where
    bot processes start,
    are the same in every run of a league, so a league resumed after a kill plays as an
    uninterrupted one does. A bot's resource limits hold for its process, hence for all
    the games of its unit.

    The computed size is at most :data:`MAX_DEALS_PER_UNIT` (100) deals, whatever the
    size of the league. A unit is a list of its games, built before its first game and
    (on a cluster) returned with every replay and log at its end, and a kill loses the
    units in flight. A Python bot's start costs about as much CPU as six games between
    fast bots: with units of up to 100 deals the starts take about a seventh of a fast
    league's CPU, with 32 about a third (``benchmarks/league.py``), while a unit stays
    quick to build, small in memory and little to play again."""
    if config.deals_per_process is not None:
        return min(config.deals, config.deals_per_process)
    tables = math.comb(len(config.bots), config.table_size)
    wanted = math.ceil(tables * config.table_size * config.deals / TARGET_UNITS)
    # In a league of series, a "deal" of the unit is a whole series of games.
    longest = max(1, MAX_DEALS_PER_UNIT // (config.series_length or 1))
    size = max(1, min(config.deals, longest, wanted))
    # Runs of even length: 6 deals in units of 3 and 3, not 5 and 1.
    return math.ceil(config.deals / math.ceil(config.deals / size))


#: The meta key under which a league keeps how its deals are cut into units.
UNIT_PLAN = "unit_plan"


def unit_plan(config: LeagueConfig, stored: str | None) -> tuple[DealRun, ...]:
    """How the league cuts its deals into units of work: the runs of deals its database
    holds (``stored``, JSON; None when it has none), with a new run for the deals it
    has not planned yet, sized by :func:`deals_per_unit` for those deals alone.

    A league grown by more deals therefore keeps the units its stored games were played
    in, and its new deals make units of their own: no unit mixes stored deals with new
    ones, so no bot plays a stored game again. A database of an earlier version of the
    referee has no plan: its deals are cut as that version cut them."""
    runs: list[DealRun] = []
    if stored is not None:
        try:
            value = json.loads(stored)
            if not isinstance(value, list):
                raise ValueError("not a list")
            runs = [DealRun.from_json(run) for run in value]
            list(unit_bounds(runs, 0))
        except ValueError as exc:
            raise StoreError(f"the league's plan of units is damaged ({exc}): {stored!r}"
                             ) from None
    end = runs[-1].stop if runs else 0
    if end < config.deals:
        size = deals_per_unit(attrs.evolve(config, deals=config.deals - end))
        runs.append(DealRun(end, config.deals, size))
    return tuple(runs)


def plan_text(runs: tuple[DealRun, ...]) -> str:
    return json.dumps([run.to_json() for run in runs])


def pending_units(
    config: LeagueConfig, done: Container[str], deals: int | None = None,
    plan: tuple[DealRun, ...] | None = None,
) -> Iterator[WorkUnit]:
    """The units of work (``referee.core.schedule.league_units``) that hold a game not in
    ``done``. A unit is played whole even when some of its games are stored: its bots'
    processes then live through the same games as in the run that stored them, and the
    stored games are not stored or replayed again (``play_unit(replayed=...)``).

    The units are cut as ``plan`` says (:func:`unit_plan`), else in units of ``deals``
    deals, else of :func:`deals_per_unit`."""
    if plan is not None:
        per_unit: int | tuple[DealRun, ...] = plan
    else:
        per_unit = deals_per_unit(config) if deals is None else deals
    names = [b.name for b in config.bots]
    if config.seed is None:
        raise ValueError("the league has no master seed yet (with_seed gives it one)")
    for unit in league_units(names, config.table_size, config.deals, config.seed, per_unit,
                             config.series_length):
        if any(g.game_id not in done for g in unit.games):
            yield unit


#: The units of work an executor plays: a league's schedule (an iterator), or units
#: chosen as the executor asks for them (an async iterator: a ladder's matchmaking,
#: which may wait for bots, or for a pause to end, before it gives the next one).
Units: TypeAlias = Iterator[WorkUnit] | AsyncIterator[WorkUnit]


async def next_unit(units: Units) -> WorkUnit | None:
    """The next unit, or None when there are no more."""
    if isinstance(units, AsyncIterator):
        return await anext(units, None)
    return next(units, None)


class LeagueJob:
    """What an executor needs to play a league's blocks and hand back their games."""

    def __init__(
        self,
        settings: MatchSettings,
        bots: Mapping[str, BotSpec],
        record: Callable[[GameOutcome], bool],
        is_stored: Callable[[str], bool],
        remote: RemoteSeats | None = None,
    ) -> None:
        self.settings = settings
        #: The league's bots by name. A unit's bots are looked up when it starts, so
        #: a caller may add bots to a mapping it owns while its units are played.
        self.bots = bots
        #: Store a finished game; False when the store already held it.
        self.record = record
        #: Whether the store holds the game with this id.
        self.is_stored = is_stored
        #: The seats of the league's remote bots, if it has any.
        self.remote = remote


class Executor(Protocol):
    """Plays the units of work of a league and records every finished game with the job.
    It asks for the next unit only when it can start it at once, so that units chosen
    as they are asked for are chosen as late as possible."""

    async def play(self, job: LeagueJob, units: Units) -> None: ...


class LocalExecutor:
    """Plays up to ``concurrency`` units of work at a time in this process.

    A remote bot has one connection, so it plays one game at a time: the units of a
    remote bot take turns (each holds a lock per remote bot it seats)."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency

    async def play(self, job: LeagueJob, units: Units) -> None:
        slots = trio.Semaphore(self.concurrency)
        turns = {name: trio.Lock() for name, spec in job.bots.items() if spec.remote}
        # One writer, in a thread: the store may wait for another program's lock (up to
        # its busy timeout) without stalling the loop, where every bot's clock runs.
        writer = trio.CapacityLimiter(1)

        async def record(outcome: GameOutcome) -> None:
            await trio.to_thread.run_sync(job.record, outcome, limiter=writer)

        def stored(games: tuple[ScheduledGame, ...]) -> set[str]:
            return {g.game_id for g in games if job.is_stored(g.game_id)}

        async def run_unit(unit: WorkUnit) -> None:
            try:
                bots = [job.bots[name] for name in unit.games[0].seats]
                replayed = await trio.to_thread.run_sync(stored, unit.games, limiter=writer)
                async with contextlib.AsyncExitStack() as stack:
                    for name in sorted(b.name for b in bots if b.remote):  # one order: no deadlock
                        await stack.enter_async_context(turns[name])
                    await play_unit(
                        unit.games, bots, job.settings, on_game=record, match_name=unit.name,
                        remote=job.remote, replayed=replayed,
                    )
            except Exception as exc:
                # The league stops at its first failure (a full disk, say), and says that
                # one: units failing the same way meanwhile would only repeat it.
                if not failures:
                    failures.append(exc)
                nursery.cancel_scope.cancel()
            finally:
                slots.release()

        failures: list[Exception] = []
        # The units' tasks keep their failures: an exception that leaves the nursery is
        # the unit source's own (or a cancellation), raised as itself.
        try:
            async with trio.open_nursery() as nursery:
                while True:
                    await slots.acquire()
                    unit = await next_unit(units)
                    if unit is None:
                        break
                    nursery.start_soon(run_unit, unit)
        except BaseExceptionGroup as group:
            raise sole_cause(group) from None
        if failures:
            raise failures[0]


async def run_league(
    config: LeagueConfig,
    store: ResultStore,
    *,
    log_dir: Path | None = None,
    on_game: Callable[[GameOutcome], None] | None = None,
    executor: Executor | None = None,
    remote: RemoteSeats | None = None,
    on_seed: Callable[[int], None] | None = None,
) -> int:
    """Play every game of the league that the store does not hold yet; returns how many
    games this run stored. ``on_seed`` hears the league's master seed (the file's, or
    the one the store holds) before the first game; ``on_game`` each newly stored game.
    ``executor`` defaults to a local one (a Dask league needs its DaskExecutor). The
    league's remote bots play over their connections to ``remote``, on the local
    executor only."""
    remote_bots = [b.name for b in config.bots if b.remote]
    missing = [n for n in remote_bots if remote is None or n not in remote.tokens]
    if missing:
        raise ValueError(f"remote bots without a remote seat open: {', '.join(missing)}")
    store.claim()
    if store.meta("ladder") is not None:
        raise StoreError(f"{store.path} holds a ladder: a league needs a database of its own")
    config = with_seed(config, store)
    assert config.seed is not None
    if on_seed is not None:
        on_seed(config.seed)
    store.bind("league", config.identity())
    store.register_bots([(b.name, b.display) for b in config.bots])
    # What `report` and `ratings` (which read only the database) need to know of this
    # run: its rules, its time control and its rating model ("": the default).
    store.note("rules", json.dumps(config.match.rules.to_wire()))
    store.note("time", json.dumps(attrs.asdict(config.match.time)))
    store.note("rating_model", config.rating_model or "")
    # Every stored id in one set: about 100 bytes a game, some 10 MB for a league of
    # 100,000 games; a query per scheduled game instead would cost far more time.
    done = store.finished_ids()
    plan = unit_plan(config, store.meta(UNIT_PLAN))
    store.note(UNIT_PLAN, plan_text(plan))
    if executor is None:
        if config.executor != "local":
            raise ValueError(
                f"the league plays on {config.executor}: pass its executor"
                " (referee.league.dask_executor.DaskExecutor)"
            )
        executor = LocalExecutor(config.concurrency)
    if remote_bots and not isinstance(executor, LocalExecutor):
        raise ValueError("remote bots can only play on the local executor")
    played = 0

    def record(outcome: GameOutcome) -> bool:
        nonlocal played
        if not store.record(record_of(outcome)):
            return False
        played += 1
        if on_game is not None:
            on_game(outcome)
        return True

    job = LeagueJob(
        settings=settings_for(config, log_dir),
        bots={b.name: b for b in config.bots},
        record=record,
        is_stored=store.has_game,
        remote=remote,
    )
    await executor.play(job, pending_units(config, done, plan=plan))
    return played


def with_seed(config: LeagueConfig, store: ResultStore) -> LeagueConfig:
    """The league with its master seed: the file's, else the one its database holds,
    which is a fresh one (``referee.core.schedule.fresh_seed``) stored when the database
    got its first league. A resumed league keeps its seed, and the seed is in the
    database for anyone who wants to play the same deals again."""
    default = fresh_seed() if config.seed is None else config.seed
    seed = int(store.setting("seed", str(default)))
    return config if config.seed is not None else attrs.evolve(config, seed=seed)
