"""Playing a league's units of work in several referee processes on this machine.

One referee process plays its games on one CPU: the bots' processes run beside it, but
the referee's own work (framing, checking, the rules, the clocks) is done in one Python
process for every game of the league. With ``workers = N`` (``--workers N``) the
process that runs ``taki-referee league`` becomes a *coordinator*, as on a Dask cluster
(:mod:`referee.league.dask_executor`): it hands one unit of work at a time to each of N
worker processes, each a Trio loop that plays the unit with the same match runner as a
local league (:func:`referee.league.dask_worker.play_unit_task`), and it alone writes
the results database, the replays and the bot logs the workers send back. Every game
keeps its schedule id, so nothing is stored twice.

Workers are started with ``spawn`` (a fresh interpreter: forking a process that runs
threads is not safe) and ignore Ctrl-C: the coordinator stops them, and each stops its
bots, when the league is interrupted.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import uuid
from collections.abc import Iterator
from multiprocessing.pool import Pool

import trio

from referee.core.errors import UserError
from referee.core.schedule import WorkUnit
from referee.league.dask_executor import deliver
from referee.league.dask_worker import UnitResult, UnitTask, WorkerBot, play_unit_task
from referee.league.runner import LeagueJob

__all__ = ["PoolExecutor", "WorkerError"]


class WorkerError(UserError):
    """A worker process could not start one of a unit's bots."""


def _worker_signals() -> None:
    """In a worker: Ctrl-C is the coordinator's to handle; SIGTERM (the coordinator
    stopping the pool) stops the unit as Ctrl-C would, so its bots are stopped too."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.default_int_handler)


class PoolExecutor:
    """Plays up to ``workers`` units of work at a time, one in each worker process."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers

    async def play(self, job: LeagueJob, units: Iterator[WorkUnit]) -> None:
        if any(spec.remote for spec in job.bots.values()):
            raise ValueError("remote bots connect to this process: they need the local executor")
        settings = job.settings
        bots = {name: WorkerBot.of(spec) for name, spec in job.bots.items()}
        run = uuid.uuid4().hex
        context = multiprocessing.get_context("spawn")
        pool = await trio.to_thread.run_sync(
            lambda: context.Pool(self.workers, initializer=_worker_signals))
        slots = trio.Semaphore(self.workers)
        # One writer, in a thread, as in a local league: the store may wait for a lock.
        writer = trio.CapacityLimiter(1)
        failures: list[Exception] = []

        async def run_unit(unit: WorkUnit) -> None:
            try:
                replayed = frozenset(g.game_id for g in unit.games if job.is_stored(g.game_id))
                task = UnitTask(
                    unit=unit.name,
                    games=unit.games,
                    bots=tuple(bots[name] for name in unit.games[0].seats),
                    settings=settings,
                    replays=settings.replay_dir is not None,
                    logs=settings.log_dir is not None,
                    python=sys.executable,
                    run=run,
                    replayed=replayed,
                )
                pending = pool.apply_async(play_unit_task, (task,))
                result: UnitResult = await trio.to_thread.run_sync(
                    pending.get, abandon_on_cancel=True)
                await trio.to_thread.run_sync(deliver, job, result, limiter=writer)
                if result.failure is not None:
                    raise WorkerError(result.failure.describe())
            except Exception as exc:
                # The first failure stops the league, as in a local league.
                if not failures:
                    failures.append(exc)
                nursery.cancel_scope.cancel()
            finally:
                slots.release()

        finished = False
        try:
            async with trio.open_nursery() as nursery:
                for unit in units:
                    await slots.acquire()
                    nursery.start_soon(run_unit, unit)
            finished = not failures
        finally:
            # Done: the idle workers exit. Stopped: each stops its unit and its bots.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(_stop, pool, finished)
        if failures:
            raise failures[0]


def _stop(pool: Pool, finished: bool) -> None:
    if finished:
        pool.close()
    else:
        pool.terminate()
    pool.join()
