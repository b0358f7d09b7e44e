"""A competition as a server hosts it: what its HTTP handlers and pages share (the
competition's settings, store and files, the organizer's token digest, a way to wake the
submission pipeline, the ladder and the finals), and whether this host can run its bots
in the sandbox."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Protocol

import attrs
import trio

from referee.competition.accept import UploadGate
from referee.competition.config import CompetitionConfig
from referee.competition.disk import DiskGauge
from referee.competition.errors import CompetitionError, Refusal, Refused
from referee.competition.finals_plan import FinalsPlan
from referee.competition.log_budget import LogUsage
from referee.competition.planned_finals import FinalsPhase, FinalsProgress
from referee.competition.season import FORMAT, SeasonSecret
from referee.competition.store import CompetitionStore
from referee.competition.workspace import Workspace
from referee.core import HardLimits
from referee.shell import LimitError, SandboxError, bwrap_path, limit_backend

__all__ = ["CompetitionHost", "LadderHandle", "check_sandbox"]


class LadderHandle(Protocol):
    """What the server asks of the running ladder."""

    @property
    def paused(self) -> bool: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def ratings(self) -> Sequence[Any]: ...


@attrs.define
class CompetitionHost:
    config: CompetitionConfig
    store: CompetitionStore
    workspace: Workspace
    #: The SHA-256 of the organizer's token.
    organizer_digest: str
    #: A message wakes the pipeline (a new submission is queued).
    wakeups: trio.MemorySendChannel[None]
    ladder: LadderHandle | None = None
    finals: FinalsProgress = attrs.field(factory=FinalsProgress)
    #: The season's secret seed (the ladder's), and when the organizer ended it (None:
    #: it runs, and only its commitment is shown).
    season: SeasonSecret | None = None
    season_ended: str | None = None
    #: What every upload passes before its body is read, and the threads that unpack.
    uploads: UploadGate = attrs.field(init=False)
    #: The disk is below its reserve (the ladder is paused), and a write of the ladder
    #: failed for want of space (it waits for space): ``referee.server.ladder_link``.
    disk_low: bool = False
    disk_failed: bool = False
    #: The ladder's bot logs after their last trim (``referee.server.ladder_link``).
    logs: LogUsage = attrs.field(factory=lambda: LogUsage(0, 0, 0))

    def __attrs_post_init__(self) -> None:
        disk = DiskGauge(self.workspace.root, self.config.submissions.min_free_mb << 20)
        self.uploads = UploadGate(self.config, self.store, self.workspace, disk)

    async def open_season(self) -> SeasonSecret:
        """The season of the database (made on the first start). Blocking in a thread."""
        seed = self.config.ladder.seed or None
        self.season = await trio.to_thread.run_sync(self.store.season, seed)
        self.season_ended = await trio.to_thread.run_sync(self.store.season_ended)
        return self.season

    def season_json(self) -> dict[str, Any]:
        """What anyone may know of the season now: its commitment, and once it has
        ended, its seed and salt (docs/competition.md, "What is public when")."""
        if self.season is None:
            return {}
        ended = self.season_ended is not None
        return {
            "format": FORMAT, "commitment": self.season.commitment,
            "ended_at": self.season_ended,
            "seed": str(self.season.seed) if ended else None,
            "salt": self.season.salt if ended else None,
        }

    async def end_season(self) -> None:
        """End the season: the ladder pauses for good, submissions close and its seed is
        published."""
        self.season_ended = await trio.to_thread.run_sync(self.store.end_season)
        await trio.to_thread.run_sync(self.store.set_paused, True)
        if self.ladder is not None:
            self.ladder.pause()

    def wake_pipeline(self) -> None:
        with contextlib.suppress(trio.WouldBlock):  # a wakeup waits already
            self.wakeups.send_nowait(None)

    @property
    def disk_full(self) -> bool:
        return self.disk_low or self.disk_failed

    def paused(self) -> bool:
        return self.ladder is None or self.ladder.paused or self.disk_full

    def may_resume(self) -> bool:
        """Whether the ladder may play on once the disk has room: not paused by the
        organizer, the season not ended, the finals not begun. Blocking."""
        return (not self.store.paused() and self.season_ended is None
                and self.finals.phase is FinalsPhase.NOT_BEGUN)

    async def set_paused(self, paused: bool) -> None:
        """Pause or resume the ladder, also after a restart; Refused to resume it once
        the finals have begun."""
        if not paused and self.finals.phase is not FinalsPhase.NOT_BEGUN:
            raise Refused(Refusal.FROZEN, "the finals have begun: the ladder stays paused")
        if not paused and self.season_ended is not None:
            raise Refused(Refusal.FROZEN, "the season has ended: the ladder stays paused")
        await trio.to_thread.run_sync(self.store.set_paused, paused)
        if self.ladder is not None:
            if paused:
                self.ladder.pause()
            elif not self.disk_full:  # else it resumes when the disk has room
                self.ladder.resume()

    async def begin_finals(self, plan: FinalsPlan) -> FinalsPlan:
        """Close submissions, pause the ladder (its games in flight finish) and begin
        the finals of ``plan`` (ValueError when they cannot be played); the plan played
        (an earlier one when they had begun already)."""
        plan.check()
        kept = await trio.to_thread.run_sync(self.store.begin_finals, plan)
        if self.ladder is not None:
            self.ladder.pause()
        self.finals.playing(kept)
        self.finals.begun.set()
        return kept

    def ratings(self) -> list[dict[str, Any]]:
        if self.ladder is None:
            return []
        return [attrs.asdict(r) for r in self.ladder.ratings()]


def check_sandbox(config: CompetitionConfig) -> None:
    """CompetitionError (one line) when bots cannot run in the sandbox with the
    competition's limits on this host: every submitted bot runs only there."""
    try:
        bwrap_path()
        box = config.sandbox
        limit_backend().check(HardLimits(box.memory_mb, box.pids, box.cpu_percent or None))
    except SandboxError:
        raise CompetitionError(
            "serve runs every bot in the sandbox, and bwrap is not installed: install"
            " the Debian package bubblewrap (apt-get install bubblewrap)") from None
    except LimitError as exc:
        raise CompetitionError(f"[sandbox] cpu_percent: {exc}") from None
