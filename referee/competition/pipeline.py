"""From an upload to a bot in the ladder: unpack it safely, read its manifest, queue it,
build it in the sandbox, check it in the sandbox (the scenarios of ``taki-referee
check``), then make it ``name@N`` or reject it with the failing step and its output.

The files of a submission live in one folder of the competition's ``uploads``:
``source`` (the upload, from its ``bot.toml`` down) and, for a bot with a ``build``,
``bot`` (what the build left). The folder is made before its row is stored; at start
every folder without a row is a leftover of a ``kill -9`` and removed
(:func:`tidy`), and every submission that was being built or checked starts over.
"""

from __future__ import annotations

import functools
import re
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Final

import attrs
import trio

from referee.competition.build import NICENESS, run_build
from referee.competition.config import CompetitionConfig
from referee.competition.errors import Refusal, Refused
from referee.competition.manifest import find_root, read_manifest
from referee.competition.records import Status, Step, Submission
from referee.competition.store import CompetitionStore
from referee.competition.unpack import UnpackLimits, unpack
from referee.compliance import BotReport, CheckSettings, check_bot, failure_summary
from referee.config import make_command
from referee.core import BotSpec, BotStartError, ResourceLimits, Sandbox

__all__ = ["UPLOAD_KEY", "Accepted", "Workspace", "accept_upload", "bot_spec",
           "check_upload_key", "new_upload_key", "process", "run_pipeline", "tidy"]

#: Lines of a failed check shown to the participant.
CHECK_LINES: Final = 40


@attrs.frozen
class Workspace:
    """The competition's files: ``incoming`` (uploads being received) and ``uploads``
    (one folder per submission)."""

    root: Path

    @property
    def incoming(self) -> Path:
        return self.root / "incoming"

    @property
    def uploads(self) -> Path:
        return self.root / "uploads"

    def folder(self, submission: Submission) -> Path:
        return self.uploads / submission.folder

    def bot_dir(self, submission: Submission) -> Path:
        """Where the bot runs from: its build's result, or its upload."""
        return self.folder(submission) / ("bot" if submission.build else "source")

    def create(self) -> None:
        for path in (self.root, self.incoming, self.uploads):
            path.mkdir(mode=0o700 if path == self.root else 0o755, parents=True,
                       exist_ok=True)
        self.root.chmod(0o711)  # the sandbox binds folders inside; nobody lists them


def tidy(store: CompetitionStore, workspace: Workspace) -> int:
    """Remove what a stopped server left half-made: partial uploads, folders without a
    submission, and the build results of submissions that will be built again. Blocking."""
    removed = 0
    for leftover in workspace.incoming.iterdir():
        leftover.unlink(missing_ok=True)
        removed += 1
    known = store.folders()
    for folder in workspace.uploads.iterdir():
        if folder.name not in known:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    for sub in store.submissions():
        if sub.status.pending:
            for stale in ("bot", "bot.tar", "logs"):
                path = workspace.folder(sub) / stale
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
    return removed


#: What an upload's idempotency key may be: 16 to 128 letters, digits, '-' and '_' (a
#: client makes one at random, and sends it again with each retry of the same upload).
UPLOAD_KEY: Final = re.compile(r"[A-Za-z0-9_-]{16,128}")


def new_upload_key() -> str:
    """A fresh random idempotency key for one upload."""
    return secrets.token_urlsafe(24)


def check_upload_key(key: str | None, what: str = "an upload's key") -> None:
    """Refused (a bad upload) unless ``key`` is None or a well-formed key; ``what`` names
    where the key came from in the message."""
    if key is not None and UPLOAD_KEY.fullmatch(key) is None:
        raise Refused(Refusal.BAD_UPLOAD, f"{what} must be 16 to 128 letters, digits,"
                      " '-' and '_'")


@attrs.frozen
class Accepted:
    """What became of an upload: its submission, and whether the upload made it (False:
    an earlier upload with the same idempotency key did, and this one was dropped)."""

    submission: Submission
    new: bool


def accept_upload(store: CompetitionStore, config: CompetitionConfig, workspace: Workspace,
                  participant: str, archive: Path, key: str | None = None) -> Accepted:
    """Unpack a received archive and queue it; Refused for an unsafe archive, a bad
    manifest or a participant over a limit (nothing is kept then). An upload with the
    idempotency ``key`` of one of the participant's earlier uploads (a retry) is
    dropped, and that earlier submission returned. Blocking."""
    try:
        check_upload_key(key)
    except Refused:
        archive.unlink(missing_ok=True)
        raise
    limits = config.submissions
    folder = workspace.uploads / secrets.token_hex(16)
    try:
        earlier = None if key is None else store.keyed_submission(participant, key)
        if earlier is not None:
            return Accepted(earlier, new=False)
        folder.mkdir(mode=0o755)
        unpack(archive, folder / "upload",
               UnpackLimits(limits.max_unpacked_mb << 20, limits.max_files))
        root = find_root(folder / "upload")
        manifest = read_manifest(root)
        root.rename(folder / "source")
        sub = store.add_submission(participant, manifest.name, manifest.command,
                                   manifest.build, folder.name, per_day=limits.per_day,
                                   max_pending=limits.max_pending, key=key)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        archive.unlink(missing_ok=True)
    if sub.folder != folder.name:  # the same retry, twice at once: the other one won
        shutil.rmtree(folder, ignore_errors=True)
        return Accepted(sub, new=False)
    return Accepted(sub, new=True)


def bot_spec(submission: Submission, name: str, config: CompetitionConfig,
             workspace: Workspace, *, niceness: int | None = None) -> BotSpec:
    """How the ladder (and the check, ``niceness`` levels lower) start a submission's
    bot: in its folder, in the sandbox, with the competition's limits."""
    box = config.sandbox
    limits = ResourceLimits(memory_mb=box.memory_mb, pids=box.pids,
                            cpu_percent=box.cpu_percent or None, niceness=niceness)
    command = make_command(submission.command, cwd=str(workspace.bot_dir(submission)),
                           limits=limits)
    return BotSpec(name, attrs.evolve(command, sandbox=Sandbox(tmp_mb=box.tmp_mb)),
                   origin=f"submission {submission.id}")


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
                  workspace: Workspace) -> Submission:
    """Build and check one queued submission; its final state."""
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
                    unpack, tar_path, folder / "bot",
                    UnpackLimits(limits.max_unpacked_mb << 20, limits.max_files))
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
                       task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Build and check the queued submissions (those a stopped server left first), up to
    ``concurrent_builds`` at once; wakes up when ``wakeups`` receives. Runs until
    cancelled; ``on_change`` is called after each submission's final state."""
    await trio.to_thread.run_sync(store.resume)
    await trio.to_thread.run_sync(tidy, store, workspace)
    task_status.started()
    busy: set[int] = set()
    slots = trio.Semaphore(config.submissions.concurrent_builds)

    async def one(sub: Submission) -> None:
        try:
            await process(sub, store, config, workspace)
            on_change()
        finally:
            busy.discard(sub.id)
            slots.release()

    async with trio.open_nursery() as nursery:
        while True:
            queued = [s for s in await trio.to_thread.run_sync(store.submissions)
                      if s.status is Status.QUEUED and s.id not in busy]
            for sub in sorted(queued, key=lambda s: s.id):
                await slots.acquire()
                busy.add(sub.id)
                nursery.start_soon(one, sub)
            with trio.move_on_after(5):
                await wakeups.receive()
