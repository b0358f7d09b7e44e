"""What runs on a Dask worker: a task plays one unit of work of a league with the same Trio
match runner as a local league (its bots checked once per run and worker process), and
returns its games, replays and logs as data, or the failure to start a bot (the
worker's fault, never the bot's). The referee's worker processes
(:mod:`referee.league.pool_worker`) run the same task.

A task receives the unit's bots as the coordinator has them (:class:`BotSpec`, which
pickles: every field, the sandbox included). On a Dask worker, a task whose coordinator
has left the cluster stops its unit and its bots (Dask cannot stop a running task)."""

from __future__ import annotations

import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import trio

from referee.core import BotSpec, BotStartError, GameOutcome, MatchSettings, ScheduledGame
from referee.league.botcheck import BotCheckFailure, check_bots
from referee.match import play_unit

__all__ = [
    "InfrastructureFailure",
    "PlayedGame",
    "UnitResult",
    "UnitTask",
    "on_this_worker",
    "play_unit_task",
]


def on_this_worker(spec: BotSpec, coordinator_python: str) -> BotSpec:
    """The bot as this worker starts it. ``python`` in a league file means the referee's
    own interpreter: the coordinator's path becomes the worker's. Everything else (the
    environment, the limits, the sandbox) is the coordinator's value as it is."""
    command = spec.local_command()  # a remote bot cannot play on a worker
    if command.argv[0] != coordinator_python:
        return spec
    argv = (sys.executable, *command.argv[1:])
    return attrs.evolve(spec, command=attrs.evolve(command, argv=argv))


@attrs.frozen
class UnitTask:
    """The games of one unit of work to play on a worker."""

    unit: str
    games: tuple[ScheduledGame, ...]
    #: The bots as the coordinator has them (see :func:`on_this_worker`).
    bots: tuple[BotSpec, ...]
    #: Without replay_dir and log_dir: the worker uses a directory of its own.
    settings: MatchSettings
    replays: bool
    logs: bool
    #: The coordinator's interpreter (see :func:`on_this_worker`).
    python: str
    #: The league run: a worker checks each bot once per run (:func:`play_unit_task`).
    run: str = ""
    #: Games stored earlier, played again only so that the bots' processes live through
    #: the same games (``play_unit(replayed=...)``).
    replayed: frozenset[str] = frozenset()


@attrs.frozen
class InfrastructureFailure:
    """A worker could not start a bot: the worker's fault, never the bot's."""

    worker: str
    #: The bot's name in the league, and its command as the worker ran it.
    bot: str
    command: str
    problem: str

    def describe(self) -> str:
        return (f"cannot start bot {self.bot!r} ({self.command}) on worker {self.worker}:"
                f" {self.problem}")


@attrs.frozen
class PlayedGame:
    #: The outcome, with no replay path (the replay file was the worker's).
    outcome: GameOutcome
    #: The replay file's text, when replays are kept.
    replay: str | None


@attrs.frozen
class UnitResult:
    """What a task returns: the games it finished, the bot logs, and the failure that
    stopped it early (the games before the failure are still in ``games``)."""

    unit: str
    worker: str
    games: tuple[PlayedGame, ...]
    #: (file name, contents) of every bot log of the unit.
    logs: tuple[tuple[str, bytes], ...] = ()
    failure: InfrastructureFailure | None = None


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):  # not running in a Dask worker
        return "local"


#: How often a unit on a Dask worker checks that its task is still wanted.
ABANDONED_POLL_S = 0.5


def _abandonment() -> Callable[[], bool] | None:
    """On a Dask worker, a function that says whether the task running in this thread
    was given up: its client (the coordinator) left the cluster, or cancelled it. Dask
    cannot stop a running task; the task stops itself, and its bots, when it sees this.
    None elsewhere."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):  # not running in a Dask worker
        return None
    key = worker.get_current_task()

    def abandoned() -> bool:
        task = worker.state.tasks.get(key)  # a read of the worker's state: one dict lookup
        return task is None or task.state in ("cancelled", "released", "forgotten")

    return abandoned


async def _until_abandoned(abandoned: Callable[[], bool], unit: trio.CancelScope) -> None:
    while not abandoned():
        await trio.sleep(ABANDONED_POLL_S)
    unit.cancel()


#: The (run, bot) pairs whose bot passed the bot check in this worker process. Only
#: passes are kept, and only for their run: a bot installed or fixed on a worker after
#: a failure is checked again, by the next run at the latest.
_CHECKED: set[tuple[str, BotSpec]] = set()


_CHECKED_LOCK = threading.Lock()


async def _check_then_play(
    task: UnitTask, bots: Sequence[BotSpec], settings: MatchSettings, keep: Any
) -> BotCheckFailure | None:
    """Check the unit's bots that this worker has not checked in this run, then play
    the unit; the first failure of the check instead (no game is played then)."""
    with _CHECKED_LOCK:
        unchecked = [(wb, b) for wb, b in zip(task.bots, bots, strict=True)
                     if (task.run, wb) not in _CHECKED]
    if unchecked:
        failures = await check_bots([b for _, b in unchecked], settings.time)
        if failures:
            return failures[0]
        with _CHECKED_LOCK:
            _CHECKED.update((task.run, wb) for wb, _ in unchecked)
    await play_unit(list(task.games), bots, settings, keep, task.unit, replayed=task.replayed)
    return None


async def _play_while_wanted(
    task: UnitTask, bots: Sequence[BotSpec], settings: MatchSettings, keep: Any,
    abandoned: Callable[[], bool] | None,
) -> BotCheckFailure | None:
    """:func:`_check_then_play`, stopped (its bots with it) as soon as ``abandoned()``
    says that nobody wants the result any more."""
    if abandoned is None:
        return await _check_then_play(task, bots, settings, keep)
    checked = None
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_until_abandoned, abandoned, nursery.cancel_scope)
            checked = await _check_then_play(task, bots, settings, keep)
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:  # what the unit raised, as it raised it
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    return checked


def play_unit_task(task: UnitTask) -> UnitResult:
    """The Dask task: check the unit's bots (once per run and worker process), then
    play the unit on this worker with the Trio match runner."""
    worker = _worker_address()
    played: list[PlayedGame] = []
    failure = None
    logs: list[tuple[str, bytes]] = []
    with tempfile.TemporaryDirectory(prefix="taki-unit-") as tmp:
        root = Path(tmp)
        settings = attrs.evolve(
            task.settings,
            replay_dir=root / "replays" if task.replays else None,
            log_dir=root / "logs" if task.logs else None,
        )
        bots = [on_this_worker(bot, task.python) for bot in task.bots]

        def keep(outcome: GameOutcome) -> None:
            text = None
            if outcome.replay is not None:
                text = outcome.replay.read_text(encoding="utf-8")
            played.append(PlayedGame(attrs.evolve(outcome, replay=None), text))

        try:
            checked = trio.run(_play_while_wanted, task, bots, settings, keep, _abandonment())
        except BotStartError as exc:
            bot = next((b.name for b in bots if b.display == exc.command), "?")
            failure = InfrastructureFailure(worker, bot, exc.command, exc.problem)
        else:
            if checked is not None:
                last = checked.stderr.splitlines()[-1:]
                problem = checked.problem + (f" (stderr: {last[0].strip()})" if last else "")
                failure = InfrastructureFailure(worker, checked.bot, checked.command, problem)
        if settings.log_dir is not None and settings.log_dir.is_dir():
            for path in sorted(settings.log_dir.iterdir()):
                logs.append((path.name, path.read_bytes()))
    return UnitResult(task.unit, worker, tuple(played), tuple(logs), failure)
