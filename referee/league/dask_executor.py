"""Playing a league's games on a Dask cluster.

The process that runs ``taki-referee league`` is the *coordinator*: it walks the
schedule lazily, submits one task per unit of work (one seat rotation of one table over a few deals
that one set of bot processes plays, as in a local league; ``[league]
deals_per_process``), keeps a bounded number of tasks in flight, and is the only
process that writes the results database, the replays and the bot logs. A task runs on
a worker: it starts the unit's bots there and plays its games with the same Trio match
runner as a local league (``trio.run(play_unit, ...)``), then returns the outcomes, the
replays (as text) and the bot logs (as bytes), since the worker's disk need not be the
coordinator's.

Every game keeps its schedule id, so a unit that runs twice (Dask re-runs the tasks of
a worker that died; the coordinator re-submits a unit a worker could not play) never
stores a game twice: games the database already holds are skipped.

Before a worker plays a bot for the first time in a league run, it runs the bot check
(:mod:`referee.league.botcheck`: the bot must start and complete the handshake). A worker that
cannot start one of a unit's bots (the check fails, or
:class:`~referee.core.faults.BotStartError` later) reports an :class:`InfrastructureFailure`
instead of forfeiting the bot. The coordinator stores the games played before it, then
re-submits the unit to the other workers only (a strict restriction: Dask
never moves it back to a worker that failed), up to :data:`MAX_ATTEMPTS` attempts per
unit; after that, or when every worker has failed, the league stops with a
:class:`ClusterError` that names the bot, its command and the workers.

Dask is an optional dependency (``pip install -e '.[dask]'`` in the source tree): this module
imports it only when a league is played on a cluster.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import trio

from referee.core import ScheduledGame, UserError, WorkUnit, open_private, write_atomically
from referee.league.dask_worker import (
    InfrastructureFailure,
    UnitResult,
    UnitTask,
    play_unit_task,
)
from referee.league.runner import LeagueJob, Units, next_unit
from referee.match import replay_path
from referee.shell import service_nursery

#: Attempts per unit when workers cannot start its bots (the first run included).
MAX_ATTEMPTS = 3
#: How long to wait for the scheduler to answer, and then for a first worker.
CONNECT_TIMEOUT_S = 10
WORKERS_TIMEOUT_S = 60
#: How often the coordinator checks its connection to the scheduler and looks for tasks
#: stranded on workers that have left, whether or not results keep arriving.
POLL_S = 5.0

#: How to install the extra: the package is installed from its source tree.
INSTALL_HINT = "pip install -e '.[dask]' in the taki-referee source tree"


class ClusterError(UserError):
    """The league cannot be played on the cluster: Dask is not installed, the scheduler
    cannot be reached, no worker joins, or no worker could start a unit's bots."""


def require_distributed() -> Any:
    """The ``distributed`` module, or a ClusterError that says how to install it."""
    try:
        import distributed
    except ImportError as exc:
        raise ClusterError(
            "running a league on a Dask cluster needs the optional dependency"
            f" dask[distributed] ({INSTALL_HINT}): {exc}"
        ) from None
    return distributed


def scheduler_address(text: str) -> str:
    """A Dask address from ``dask://HOST:PORT`` (the league file's form), ``HOST:PORT``
    or an address with a Dask protocol such as ``tcp://HOST:PORT``."""
    text = text.strip()
    if not text:
        raise ClusterError("the Dask scheduler address is empty")
    if text.startswith("dask://"):
        return "tcp://" + text.removeprefix("dask://")
    if "://" in text:
        return text
    return "tcp://" + text


# ------------------------------------------------------------------- the task


# ------------------------------------------------------------ the coordinator


def deliver(job: LeagueJob, result: UnitResult) -> int:
    """Store the games of a task's result; returns how many were new. Games the store
    already holds (a unit played twice, a result delivered twice) are skipped, and
    their replays are not written again."""
    settings = job.settings
    if settings.log_dir is not None and result.logs:
        for name, data in result.logs:
            with open_private(settings.log_dir / Path(name).name) as log:  # 0600, dir 0700
                log.write(data)
    new = 0
    for played in result.games:
        outcome = played.outcome
        if job.is_stored(outcome.game.game_id):
            continue
        # The bot logs now live in the coordinator's log folder, under the same names.
        outcome = attrs.evolve(outcome, seats=tuple(
            attrs.evolve(seat, log=None if seat.log is None or settings.log_dir is None
                         else settings.log_dir / seat.log.name)
            for seat in outcome.seats
        ))
        if played.replay is not None and settings.replay_dir is not None:
            path = replay_path(settings.replay_dir, outcome.game.game_id)
            write_atomically(path, played.replay, what="replay", make_parents=True)
            outcome = attrs.evolve(outcome, replay=path)
        if job.record(outcome):
            new += 1
    return new


@attrs.frozen
class _NextUnit:
    """A unit the coordinator asked for; None: there are no more, or the source failed
    with ``failure``."""

    unit: WorkUnit | None
    failure: Exception | None = None


@attrs.define
class _Attempt:
    """A unit of work on its way through the cluster."""

    unit: str
    games: list[ScheduledGame]
    number: int = 1
    failed_workers: set[str] = attrs.field(factory=set)
    #: The only workers the current submission may run on (None: any).
    allowed: list[str] | None = None
    #: Why earlier attempts failed.
    failures: list[InfrastructureFailure | str] = attrs.field(factory=list)


class DaskExecutor:
    """Plays a league's units of work as tasks on the Dask cluster of ``scheduler``
    (``dask://HOST:PORT``, ``HOST:PORT`` or ``tcp://HOST:PORT``).

    At most ``in_flight`` tasks are submitted at a time (default: twice the workers'
    threads when the league starts, so every worker thread has its next unit queued)."""

    def __init__(
        self, scheduler: str, *, in_flight: int | None = None, max_attempts: int = MAX_ATTEMPTS
    ) -> None:
        require_distributed()
        self.address = scheduler_address(scheduler)
        self.in_flight = in_flight
        self.max_attempts = max_attempts
        #: The workers' failures to start a bot in the last run (each one re-submitted
        #: its unit elsewhere, or stopped the league).
        self.failures: list[InfrastructureFailure] = []

    async def play(self, job: LeagueJob, units: Units) -> None:
        self.failures = []
        client = await trio.to_thread.run_sync(self._connect)
        try:
            await _Coordinator(self, client, job).run(units)
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(_close, client)

    def _connect(self) -> Any:
        distributed = require_distributed()
        try:
            client = distributed.Client(
                self.address, timeout=CONNECT_TIMEOUT_S, set_as_default=False
            )
        except (OSError, TimeoutError) as exc:
            raise ClusterError(
                f"cannot reach the Dask scheduler at {self.address}: {exc}"
            ) from None
        try:
            client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
        except (OSError, TimeoutError):
            _close(client)
            raise ClusterError(
                f"no Dask worker joined the scheduler at {self.address}"
                f" within {WORKERS_TIMEOUT_S} s"
            ) from None
        return client


def _close(client: Any) -> None:
    with contextlib.suppress(Exception):  # best effort: the scheduler may be gone
        client.close(timeout=5)


class _Coordinator:
    """One league run on the cluster: submits units, settles finished tasks."""

    def __init__(self, executor: DaskExecutor, client: Any, job: LeagueJob) -> None:
        self.executor = executor
        self.client = client
        self.job = job
        self.distributed = require_distributed()
        self.run_id = uuid.uuid4().hex[:12]
        self.submissions = itertools.count(1)
        self.in_flight: dict[Any, _Attempt] = {}
        self.retry: list[_Attempt] = []
        #: Failures to start each bot, by bot name: no unit with that bot is sent to
        #: those workers again in this run.
        self.cannot_start: dict[str, list[InfrastructureFailure]] = {}
        settings = job.settings
        self.settings = attrs.evolve(settings, replay_dir=None, log_dir=None)
        self.replays = settings.replay_dir is not None
        self.logs = settings.log_dir is not None

    async def run(self, units: Units) -> None:
        limit = self.executor.in_flight
        if limit is None:
            threads = await trio.to_thread.run_sync(self._threads)
            limit = max(2, 2 * threads)
        await self._coordinate(units, limit)

    async def _coordinate(self, units: Units, limit: int) -> None:
        # Finished tasks and new units arrive on one channel: a unit is asked for (from
        # a task of its own, since a ladder's source may wait) only when a task can be
        # submitted, and finished tasks are settled meanwhile.
        send, receive = trio.open_memory_channel[Any](math.inf)
        token = trio.lowlevel.current_trio_token()
        asked = trio.Semaphore(0)

        def finished(future: Any) -> None:  # called in a thread of the Dask client
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(send.send_nowait, future)

        async def feed() -> None:
            # A service task: the source's failure goes to the coordinator, which raises it.
            while True:
                await asked.acquire()
                try:
                    unit = await next_unit(units)
                except Exception as exc:
                    send.send_nowait(_NextUnit(None, exc))
                    return
                send.send_nowait(_NextUnit(unit))
                if unit is None:
                    return

        async with service_nursery() as nursery:
            nursery.start_soon(feed)
            exhausted = False
            waiting = 0  # units asked for and not yet arrived
            next_check = trio.current_time() + POLL_S
            while True:
                while len(self.in_flight) + waiting < limit:
                    if self.retry:
                        await self._launch(self.retry.pop(), finished)
                    elif not exhausted and not waiting:
                        waiting += 1
                        asked.release()
                    else:
                        break
                if not self.in_flight and exhausted:
                    return
                done = None
                with trio.move_on_at(next_check):
                    done = await receive.receive()
                if isinstance(done, _NextUnit):
                    waiting -= 1
                    exhausted = await self._take(done, finished)
                elif done is not None and done in self.in_flight:
                    # (Not in flight: a stranded task that was re-submitted.)
                    await self._settle(done, self.in_flight.pop(done))
                # Every POLL_S, whether or not tasks finish meanwhile: a stranded task
                # must not hold its place while the others keep the results coming.
                if trio.current_time() >= next_check:
                    self._check_connection()
                    await self._reroute_stranded()
                    next_check = trio.current_time() + POLL_S

    async def _take(self, arrived: _NextUnit, finished: Callable[[Any], None]) -> bool:
        """Launch the unit the source handed over; True when the source has no more."""
        if arrived.failure is not None:
            raise arrived.failure
        if arrived.unit is None:
            return True
        await self._launch(_Attempt(arrived.unit.name, list(arrived.unit.games)), finished)
        return False

    async def _launch(self, attempt: _Attempt, finished: Callable[[Any], None]) -> None:
        """Submit ``attempt``; ``finished`` hears of its task when it is done."""
        future = await self._submit(attempt)
        self.in_flight[future] = attempt
        future.add_done_callback(finished)

    def _check_connection(self) -> None:
        if self.client.status not in ("running", "connecting"):
            raise ClusterError(
                f"lost the connection to the Dask scheduler at {self.executor.address};"
                " run the league again to resume"
            )

    async def _reroute_stranded(self) -> None:
        """Re-submit the tasks restricted to workers that have all left the cluster (a
        restricted task would wait for them forever)."""
        restricted = [f for f, a in self.in_flight.items() if a.allowed is not None]
        if not restricted:
            return
        live = set(await trio.to_thread.run_sync(self.client.nthreads))
        for future in restricted:
            attempt = self.in_flight[future]
            assert attempt.allowed is not None
            if live.isdisjoint(attempt.allowed):
                del self.in_flight[future]
                # Cancelling waits for the scheduler: never on the Trio thread.
                await trio.to_thread.run_sync(future.cancel)
                self.retry.append(attempt)

    def _threads(self) -> int:
        return sum(self.client.nthreads().values()) or 1

    async def _submit(self, attempt: _Attempt) -> Any:
        task = UnitTask(
            unit=attempt.unit,
            games=tuple(attempt.games),
            bots=tuple(self.job.bots[name] for name in attempt.games[0].seats),
            settings=self.settings,
            replays=self.replays,
            logs=self.logs,
            python=sys.executable,
            run=self.run_id,
            replayed=frozenset(g.game_id for g in attempt.games
                               if self.job.is_stored(g.game_id)),
        )
        known = [f for bot in task.bots for f in self.cannot_start.get(bot.name, [])]
        excluded = attempt.failed_workers | {f.worker for f in known}
        workers = None
        if excluded:
            nthreads = await trio.to_thread.run_sync(self.client.nthreads)
            workers = [w for w in nthreads if w not in excluded]
            if not workers:
                attempt.failures.extend(known)
                self._give_up(attempt, "on any worker of the cluster")
        attempt.allowed = workers
        key = f"taki-unit-{attempt.unit}-{self.run_id}-{next(self.submissions)}"
        # A strict restriction: with allow_other_workers the list is only a preference,
        # and work stealing hands the task back to a worker that cannot start its bot.
        return self.client.submit(
            play_unit_task, task, key=key, pure=False,
            workers=workers, allow_other_workers=False,
        )

    async def _settle(self, future: Any, attempt: _Attempt) -> None:
        status = future.status
        if status == "finished":
            result: UnitResult = await trio.to_thread.run_sync(future.result)
            # In a thread: the store may wait for a lock, and nothing may stall the loop.
            await trio.to_thread.run_sync(deliver, self.job, result)
            if result.failure is not None:
                self._failed(attempt, result.failure)
            return
        if status == "error":
            exc = await trio.to_thread.run_sync(future.exception)
            if isinstance(exc, self.distributed.KilledWorker):
                raise ClusterError(
                    f"unit {attempt.unit}: the Dask workers that ran it died"
                    f" ({exc}); the games stored so far are kept, run the league"
                    " again to resume"
                ) from None
            raise exc
        # Cancelled or lost: the scheduler dropped the task. Play the unit again.
        self._check_connection()
        self._again(attempt, f"the scheduler dropped the task ({status})")

    def _failed(self, attempt: _Attempt, failure: InfrastructureFailure) -> None:
        self.executor.failures.append(failure)
        self.cannot_start.setdefault(failure.bot, []).append(failure)
        attempt.failed_workers.add(failure.worker)
        self._again(attempt, failure)

    def _again(self, attempt: _Attempt, why: InfrastructureFailure | str) -> None:
        attempt.failures.append(why)
        if all(self.job.is_stored(g.game_id) for g in attempt.games):
            return
        if attempt.number >= self.executor.max_attempts:
            self._give_up(attempt, f"in {attempt.number} attempts")
        # The whole unit again, its stored games only replayed: the bots' processes live
        # through the same games as in a run that was never interrupted.
        self.retry.append(attrs.evolve(attempt, number=attempt.number + 1))

    def _give_up(self, attempt: _Attempt, where: str) -> None:
        raise ClusterError(
            f"unit {attempt.unit} could not be played {where}:"
            f" {describe_failures(attempt.failures)}"
        )


def describe_failures(failures: list[InfrastructureFailure | str]) -> str:
    """Failures to start a bot grouped by bot, command and problem, with their workers,
    e.g. ``cannot start bot 'x' (x --fast) on workers tcp://a:1, tcp://b:2: executable
    'x' not found``; other reasons as they are."""
    workers: dict[tuple[str, str, str], list[str]] = {}
    other: list[str] = []
    for failure in failures:
        if isinstance(failure, str):
            other.append(failure)
        else:
            seen = workers.setdefault((failure.bot, failure.command, failure.problem), [])
            if failure.worker not in seen:
                seen.append(failure.worker)
    parts = [
        f"cannot start bot {bot!r} ({command}) on worker{'s' if len(where) > 1 else ''}"
        f" {', '.join(where)}: {problem}"
        for (bot, command, problem), where in workers.items()
    ]
    text = "; ".join([*parts, *dict.fromkeys(other)])
    if workers:
        text += " (every worker must be able to run every bot command)"
    return text
