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

from referee.competition.config import CompetitionConfig
from referee.competition.errors import CompetitionError, Refusal, Refused
from referee.competition.finals_plan import FinalsPlan
from referee.competition.pipeline import Workspace
from referee.competition.planned_finals import FinalsPhase, FinalsProgress
from referee.competition.store import CompetitionStore
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

    def wake_pipeline(self) -> None:
        with contextlib.suppress(trio.WouldBlock):  # a wakeup waits already
            self.wakeups.send_nowait(None)

    def paused(self) -> bool:
        return self.ladder is None or self.ladder.paused

    async def set_paused(self, paused: bool) -> None:
        """Pause or resume the ladder, also after a restart; Refused to resume it once
        the finals have begun."""
        if not paused and self.finals.phase is not FinalsPhase.NOT_BEGUN:
            raise Refused(Refusal.FROZEN, "the finals have begun: the ladder stays paused")
        await trio.to_thread.run_sync(self.store.set_paused, paused)
        if self.ladder is not None:
            if paused:
                self.ladder.pause()
            else:
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
