"""Playing a league's units of work in several referee processes on this machine.

One referee process plays its games on one CPU: the bots' processes run beside it, but
the referee's own work (framing, checking, the rules, the clocks) is done in one Python
process for every game of the league. With ``workers = N`` (``--workers N``) the
process that runs ``taki-referee league`` becomes a *coordinator*, as on a Dask cluster
(:mod:`referee.league.dask_executor`): it hands one unit of work at a time to each of N
worker processes (:mod:`referee.league.pool_worker`), each playing the unit with the
same match runner as a local league, and it alone writes the results database, the
replays and the bot logs the workers send back. Every game keeps its schedule id, so
nothing is stored twice.

The workers are child processes started and watched with Trio: the coordinator writes a
task down a worker's standard input and reads the result from its standard output. That
input is also the worker's lifeline (:mod:`referee.league.pool_worker`): when the league
stops (done, a failure, Ctrl-C, SIGTERM), the coordinator closes it, which stops the
worker's unit and its bots, and kills a worker that has not exited within
:data:`STOP_TIMEOUT_S`; when the coordinator dies, even by SIGKILL, the kernel closes it,
with the same effect. Nothing depends on which thread started a worker.
"""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys
import uuid

import trio

from referee.core import UserError, WorkUnit, sole_cause
from referee.league.dask_executor import deliver
from referee.league.dask_worker import UnitResult, UnitTask
from referee.league.pool_worker import HEADER, frame
from referee.league.runner import LeagueJob, Units, next_unit

__all__ = ["STOP_TIMEOUT_S", "PoolExecutor", "WorkerError"]

#: How long a worker has to stop its unit and its bots after SIGTERM.
STOP_TIMEOUT_S = 10.0


class WorkerError(UserError):
    """A worker process could not start one of a unit's bots, or stopped by itself."""


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.tasks = process.stdin
        self.results = process.stdout

    async def play(self, task: UnitTask) -> UnitResult:
        await self.tasks.send_all(frame(task))
        header = await self._read(HEADER.size)
        (length,) = HEADER.unpack(header)
        result = pickle.loads(await self._read(length))
        assert isinstance(result, UnitResult)
        return result

    async def _read(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = await self.results.receive_some(size - len(data))
            if not chunk:
                status = await self.process.wait()
                raise WorkerError(f"a referee worker process stopped (exit status {status})"
                                  " in the middle of a unit; its bots' logs may say why")
            data += chunk
        return bytes(data)

    async def stop(self) -> None:
        """End the worker: close its input, its lifeline (it stops its unit and its bots,
        and exits), then SIGKILL if it is still there after :data:`STOP_TIMEOUT_S`."""
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self.tasks.aclose()
        with trio.move_on_after(STOP_TIMEOUT_S):
            await self.process.wait()
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        await self.results.aclose()


class PoolExecutor:
    """Plays up to ``workers`` units of work at a time, one in each worker process."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers

    async def play(self, job: LeagueJob, units: Units) -> None:
        if any(spec.remote for spec in job.bots.values()):
            raise ValueError("remote bots connect to this process: they need the local executor")
        settings = job.settings
        run = uuid.uuid4().hex
        # One writer, in a thread, as in a local league: the store may wait for a lock.
        writer = trio.CapacityLimiter(1)
        failures: list[Exception] = []
        idle: list[_Worker] = []
        started: list[_Worker] = []

        async def run_unit(unit: WorkUnit, worker: _Worker) -> None:
            try:
                replayed = frozenset(g.game_id for g in unit.games if job.is_stored(g.game_id))
                task = UnitTask(
                    unit=unit.name,
                    games=unit.games,
                    bots=tuple(job.bots[name] for name in unit.games[0].seats),
                    settings=settings,
                    replays=settings.replay_dir is not None,
                    logs=settings.log_dir is not None,
                    python=sys.executable,
                    run=run,
                    replayed=replayed,
                )
                result = await worker.play(task)
                await trio.to_thread.run_sync(deliver, job, result, limiter=writer)
                if result.failure is not None:
                    raise WorkerError(result.failure.describe())
                idle.append(worker)
                free.release()
            except Exception as exc:
                # The first failure stops the league, as in a local league.
                if not failures:
                    failures.append(exc)
                nursery.cancel_scope.cancel()

        free = trio.Semaphore(0)
        try:
            for _ in range(self.workers):
                # A session of its own: Ctrl-C reaches the coordinator alone, which then
                # stops each worker by closing its input.
                process = await trio.lowlevel.open_process(
                    [sys.executable, "-m", "referee.league.pool_worker"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
                )
                worker = _Worker(process)
                started.append(worker)
                idle.append(worker)
                free.release()
            try:
                async with trio.open_nursery() as nursery:
                    while True:
                        await free.acquire()
                        unit = await next_unit(units)
                        if unit is None:
                            break
                        nursery.start_soon(run_unit, unit, idle.pop())
            except BaseExceptionGroup as group:
                # The units keep their failures: this is the unit source's own.
                raise sole_cause(group) from None
        finally:
            with trio.CancelScope(shield=True):
                async with trio.open_nursery() as stopping:
                    for worker in started:
                        stopping.start_soon(worker.stop)
        if failures:
            raise failures[0]
