"""What the HTTP handlers share: the competition's settings, store and files, the
organizer's token digest, a way to wake the submission pipeline, and the ladder."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Protocol

import attrs
import trio

from referee.competition import CompetitionConfig, CompetitionStore, Workspace

__all__ = ["LadderHandle", "ServerState"]


class LadderHandle(Protocol):
    """What the server asks of the running ladder."""

    @property
    def paused(self) -> bool: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def ratings(self) -> Sequence[Any]: ...


@attrs.define
class ServerState:
    config: CompetitionConfig
    store: CompetitionStore
    workspace: Workspace
    #: The SHA-256 of the organizer's token.
    organizer_digest: str
    #: A message wakes the pipeline (a new submission is queued).
    wakeups: trio.MemorySendChannel[None]
    ladder: LadderHandle | None = None

    def wake_pipeline(self) -> None:
        with contextlib.suppress(trio.WouldBlock):  # a wakeup waits already
            self.wakeups.send_nowait(None)

    def paused(self) -> bool:
        return self.ladder is None or self.ladder.paused

    async def set_paused(self, paused: bool) -> None:
        """Pause or resume the ladder, also after a restart."""
        await trio.to_thread.run_sync(self.store.set_paused, paused)
        if self.ladder is not None:
            if paused:
                self.ladder.pause()
            else:
                self.ladder.resume()

    def ratings(self) -> list[dict[str, Any]]:
        if self.ladder is None:
            return []
        return [attrs.asdict(r) for r in self.ladder.ratings()]
