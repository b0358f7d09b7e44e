"""The queue of submissions: each one queued is built in the sandbox (when it has a
``build``), checked in the sandbox (the scenarios of ``taki-referee check``), then made
``name@N`` or rejected with the failing step and its output.

The queue is read from the database once at start (the submissions a stopped server
was building or checking start over) and again only when an upload wakes it. The
build's result is unpacked on the upload gate's threads (``referee.competition.accept``),
never on those that start the ladder's bots.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final

import attrs
import trio

from referee.competition.bot_specs import bot_spec
from referee.competition.build import NICENESS, run_build
from referee.competition.config import CompetitionConfig
from referee.competition.errors import Refused
from referee.competition.records import Status, Step, Submission
from referee.competition.store import CompetitionStore
from referee.competition.unpack import UnpackLimits
from referee.competition.unpack_process import unpack_in_process
from referee.competition.workspace import Workspace, tidy
from referee.compliance import BotReport, CheckSettings, check_bot, failure_summary
from referee.core import BotStartError

__all__ = ["process", "run_pipeline"]

#: Lines of a failed check shown to the participant.
CHECK_LINES: Final = 40


def describe_check(report: BotReport, scenarios: int) -> str:
    """A failed check in a few lines: each failing scenario and what went wrong, and the
    bot's last lines on stderr (``referee.compliance.failure_summary``)."""
    failed = len(report.failures)
    lines = [f"check: {scenarios - failed} of {scenarios} scenarios passed, {failed} failed"
             " (twice)", *failure_summary(report, CHECK_LINES)]
    return "\n".join(lines)


async def _check(sub: Submission, config: CompetitionConfig,
                 workspace: Workspace) -> tuple[bool, str]:
    """Run the compliance scenarios against the bot, in the sandbox, within the time
    limit of a check."""
    try:
        # At the build's priority: a check never takes a CPU from the ladder's games.
        spec = bot_spec(sub, f"{sub.bot}-check", config, workspace, niceness=NICENESS)
    except ValueError as exc:
        return False, f"check: the command cannot be started: {exc}"
    settings = CheckSettings(time=config.time, log_dir=workspace.folder(sub) / "logs")
    with trio.move_on_after(config.sandbox.check_seconds):
        try:
            report = await check_bot(spec, settings)
            scenarios = len(report.outcomes)
            if report.passed:
                return True, f"check: {scenarios} of {scenarios} scenarios passed"
            # What failed runs once more: a loaded machine can make a sound bot miss a
            # short limit once (the server's fault, not the bot's); a broken bot fails
            # again.
            failed = frozenset(o.name for o in report.failures)
            report = await check_bot(spec, attrs.evolve(settings, only=failed))
        except BotStartError as exc:
            return False, f"check: {exc}"
        if report.passed:
            return True, (f"check: {scenarios} of {scenarios} scenarios passed"
                          f" ({', '.join(sorted(failed))}"
                          " on a second run)")
        return False, describe_check(report, scenarios)
    return False, f"check: not finished after {config.sandbox.check_seconds} s"


async def process(sub: Submission, store: CompetitionStore, config: CompetitionConfig,
                  workspace: Workspace, unpackers: trio.CapacityLimiter | None = None,
                  ) -> Submission:
    """Build and check one queued submission (its build's result unpacked on
    ``unpackers``' threads); its final state."""
    folder = workspace.folder(sub)
    output = ""
    if sub.build:
        if not await trio.to_thread.run_sync(store.start, sub.id, Status.BUILDING):
            return await trio.to_thread.run_sync(store.submission, sub.id)
        tar_path = folder / "bot.tar"
        limits = config.submissions
        result = await run_build(folder / "source", sub.build, config.sandbox, tar_path,
                                 max_bytes=limits.max_unpacked_mb << 20)
        if result.ok:
            try:
                await trio.to_thread.run_sync(
                    unpack_in_process, tar_path, folder / "bot",
                    UnpackLimits(limits.max_unpacked_mb << 20, limits.max_files),
                    limiter=unpackers)
            except Refused as exc:
                result = attrs.evolve(result, ok=False,
                                      output=f"{result.output}\nbuild: its result: {exc}")
        tar_path.unlink(missing_ok=True)
        if not result.ok:
            await trio.to_thread.run_sync(store.reject, sub.id, Step.BUILD, result.output)
            return await trio.to_thread.run_sync(store.submission, sub.id)
        output = result.output
    if not await trio.to_thread.run_sync(
            functools.partial(store.start, sub.id, Status.CHECKING, first=not sub.build)):
        return await trio.to_thread.run_sync(store.submission, sub.id)
    passed, said = await _check(sub, config, workspace)
    output = f"{output}\n{said}".strip()
    if not passed:
        await trio.to_thread.run_sync(store.reject, sub.id, Step.CHECK, output)
        return await trio.to_thread.run_sync(store.submission, sub.id)
    return await trio.to_thread.run_sync(store.activate, sub.id, output,
                                         config.submissions.active_bots)


async def run_pipeline(store: CompetitionStore, config: CompetitionConfig,
                       workspace: Workspace, wakeups: trio.MemoryReceiveChannel[None],
                       on_change: Callable[[], None], *,
                       unpackers: trio.CapacityLimiter | None = None,
                       task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Build and check the queued submissions (those a stopped server left first), up to
    ``concurrent_builds`` at once; the queue is read again when ``wakeups`` receives.
    Runs until cancelled; ``on_change`` is called after each submission's final
    state."""
    await trio.to_thread.run_sync(store.resume)
    await trio.to_thread.run_sync(tidy, store, workspace)
    task_status.started()
    busy: set[int] = set()
    slots = trio.Semaphore(config.submissions.concurrent_builds)

    async def one(sub: Submission) -> None:
        try:
            await process(sub, store, config, workspace, unpackers)
            on_change()
        finally:
            busy.discard(sub.id)
            slots.release()

    async with trio.open_nursery() as nursery:
        while True:
            queued = [s for s in await trio.to_thread.run_sync(store.queued)
                      if s.id not in busy]
            for sub in queued:
                await slots.acquire()
                busy.add(sub.id)
                nursery.start_soon(one, sub)
            await wakeups.receive()
