"""From a received archive to a queued submission, and the gate every upload passes
before its body is read.

The gate (:class:`UploadGate`) answers at once, before a byte of the archive is
received or unpacked: a full disk (507), a participant over a limit (uploads and
megabytes unpacked in the last 24 hours, those refused once unpacked included; uploads
waiting for their check or still being received or unpacked: 429, later for each one
refused in a row), as many uploads of all participants being received or unpacked as
the server takes at once (503), frozen submissions (409), or a retry of an upload
already stored (its submission, nothing read). The
unpacking runs in a process of its own at a lower CPU priority
(``referee.competition.unpack_process``), waited for by threads of their own (a
``trio.CapacityLimiter`` of ``concurrent_unpacks``), never by the threads that start
the ladder's bots and write its games.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
import shutil
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Final

import attrs
import trio

from referee.competition.config import CompetitionConfig
from referee.competition.disk import DiskGauge
from referee.competition.errors import Refusal, Refused
from referee.competition.manifest import find_root, read_manifest
from referee.competition.records import Submission
from referee.competition.store import CompetitionStore
from referee.competition.unpack import UnpackLimits, unpack
from referee.competition.unpack_process import unpack_in_process
from referee.competition.upload_keys import check_upload_key
from referee.competition.workspace import Workspace

__all__ = ["Accepted", "UploadGate", "accept_upload", "folder_bytes"]

DAY_S: Final = 24 * 3600.0
#: The wait of the second upload refused in a row over a limit, beyond the server's
#: tarpit (doubled for each further one, up to MAX_STRIKE_WAIT_S).
STRIKE_WAIT_S: Final = 0.5
MAX_STRIKE_WAIT_S: Final = 8.0
#: Refusals further apart than this are not in a row.
STRIKE_MEMORY_S: Final = 60.0


@attrs.frozen
class Accepted:
    """What became of an upload: its submission, and whether the upload made it (False:
    an earlier upload with the same idempotency key did, and this one was dropped)."""

    submission: Submission
    new: bool


def folder_bytes(folder: Path) -> int:
    """The bytes of the files under ``folder``. Blocking."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()
               and not p.is_symlink())


def accept_upload(store: CompetitionStore, config: CompetitionConfig, workspace: Workspace,
                  participant: str, archive: Path, key: str | None = None, *,
                  unpacker: Callable[[Path, Path, UnpackLimits], int] = unpack) -> Accepted:
    """Unpack a received archive (with ``unpacker``) and queue it; Refused for an unsafe
    archive, a bad manifest or a participant over a limit (nothing is kept then). An
    upload with the idempotency ``key`` of one of the participant's earlier uploads (a
    retry) is dropped, and that earlier submission returned. Blocking."""
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
        folder.mkdir(mode=0o700)
        unpacker(archive, folder / "upload",
                 UnpackLimits(limits.max_unpacked_mb << 20, limits.max_files))
        root = find_root(folder / "upload")
        manifest = read_manifest(root)
        root.rename(folder / "source")
        sub = store.add_submission(participant, manifest.name, manifest.command,
                                   manifest.build, folder.name, per_day=limits.per_day,
                                   max_pending=limits.max_pending, key=key,
                                   size=folder_bytes(folder))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        archive.unlink(missing_ok=True)
    if sub.folder != folder.name:  # the same retry, twice at once: the other one won
        shutil.rmtree(folder, ignore_errors=True)
        return Accepted(sub, new=False)
    return Accepted(sub, new=True)


@attrs.define
class UploadGate:
    """What every upload passes through, from its request to its submission (its
    methods are called on the Trio thread)."""

    config: CompetitionConfig
    store: CompetitionStore
    workspace: Workspace
    disk: DiskGauge
    #: The threads that unpack uploads and build results, and no others.
    unpackers: trio.CapacityLimiter = attrs.field(init=False)
    #: Uploads of each participant being received or unpacked now.
    _receiving: Counter[str] = attrs.field(init=False, factory=Counter)
    #: Uploads of each participant refused in a row over a limit, and when the last was.
    _strikes: dict[str, tuple[int, float]] = attrs.field(init=False, factory=dict)
    #: Uploads of each participant refused once unpacked (kept here, not stored).
    _unpacked_refused: defaultdict[str, list[tuple[float, int]]] = attrs.field(
        init=False, factory=lambda: defaultdict(list))

    def __attrs_post_init__(self) -> None:
        self.unpackers = trio.CapacityLimiter(self.config.submissions.concurrent_unpacks)

    @contextlib.asynccontextmanager
    async def admit(self, participant: str, key: str | None = None
                    ) -> AsyncIterator[Accepted | None]:
        """Let an upload of ``participant`` in, or refuse it before its body is read;
        within: None, or (a retry of an upload already stored) that upload's result. A
        refusal over a limit (TOO_MANY) comes after :meth:`strike`'s wait."""
        check_upload_key(key)
        if key is not None:
            earlier = await trio.to_thread.run_sync(self.store.keyed_submission,
                                                    participant, key)
            if earlier is not None:
                yield Accepted(earlier, new=False)
                return
        try:
            await self._let_in(participant)
        except Refused as exc:
            if exc.refusal is Refusal.TOO_MANY:
                await trio.sleep(self.strike(participant, trio.current_time()))
            raise
        self._strikes.pop(participant, None)
        try:
            yield None
        finally:
            self._receiving[participant] -= 1

    async def _let_in(self, participant: str) -> None:
        """Count an upload of ``participant`` as being received, or refuse it."""
        self.disk.require_room()
        limits = self.config.submissions
        if self._receiving[participant] >= limits.max_pending:
            raise Refused(Refusal.TOO_MANY, f"limit reached: {limits.max_pending} uploads"
                          " of yours are being received or waiting for their check")
        if self._receiving.total() >= limits.concurrent_uploads:
            raise Refused(Refusal.BUSY, f"the server is receiving {limits.concurrent_uploads}"
                          " uploads at once: try again in a few seconds")
        self._receiving[participant] += 1
        try:
            today, used, pending = await trio.to_thread.run_sync(self.store.recent,
                                                                 participant)
            refused = self._refused(participant)
            if today + len(refused) >= limits.per_day:
                raise Refused(Refusal.TOO_MANY,
                              f"limit reached: {limits.per_day} submissions in 24 hours")
            if used + sum(size for _, size in refused) >= limits.unpacked_mb_per_day << 20:
                raise Refused(Refusal.TOO_MANY, f"limit reached: {limits.unpacked_mb_per_day}"
                              " MiB unpacked in 24 hours")
            if pending + self._receiving[participant] > limits.max_pending:
                raise Refused(Refusal.TOO_MANY, f"limit reached: {limits.max_pending}"
                              " submissions waiting for their check; wait for one to"
                              " finish")
        except BaseException:
            self._receiving[participant] -= 1
            raise

    def strike(self, participant: str, now: float) -> float:
        """Count an upload of ``participant`` refused over a limit at ``now`` (seconds
        of a monotonic clock); the seconds its refusal waits before it is answered,
        beyond the server's tarpit: 0 for the first
        in a row, then :data:`STRIKE_WAIT_S` doubling with each one refused in a row (an
        upload let in, or :data:`STRIKE_MEMORY_S` without one refused, starts again),
        up to :data:`MAX_STRIKE_WAIT_S`. A flood of uploads over a limit slows to a few
        requests a second, whatever its number of connections."""
        count, last = self._strikes.get(participant, (0, now))
        count = 0 if now - last > STRIKE_MEMORY_S else count
        self._strikes[participant] = (count + 1, now)
        return 0.0 if count == 0 else min(MAX_STRIKE_WAIT_S, STRIKE_WAIT_S * 2 ** (count - 1))

    def _refused(self, participant: str) -> list[tuple[float, int]]:
        """The participant's uploads refused in the last 24 hours, once unpacked: when,
        and the bytes their unpacking wrote at most."""
        now = trio.current_time()
        kept = [(at, size) for at, size in self._unpacked_refused[participant]
                if now - at < DAY_S]
        self._unpacked_refused[participant] = kept
        return kept

    async def accept(self, participant: str, archive: Path, key: str | None) -> Accepted:
        """Unpack (in a process of its own) and queue a received archive (within
        :meth:`admit`), from the unpacking threads. A refused upload counts towards the
        participant's daily limits as an accepted one does (a bomb, with the bytes it
        wrote before it was stopped)."""
        try:
            return await trio.to_thread.run_sync(
                functools.partial(accept_upload, self.store, self.config, self.workspace,
                                  participant, archive, key, unpacker=unpack_in_process),
                limiter=self.unpackers)
        except Refused as exc:
            limits = self.config.submissions
            size = (limits.max_unpacked_mb << 20 if exc.refusal is Refusal.TOO_LARGE
                    else 0)
            self._unpacked_refused[participant].append((trio.current_time(), size))
            raise
