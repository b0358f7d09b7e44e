"""A watchdog that kills a bot's process group if the referee dies without cleaning up.

:func:`referee.process.open_bot_process` kills every bot it started however its block is
left, but nothing in the referee runs when the referee itself is killed with SIGKILL, or
dies with its terminal or of an interpreter crash. A bot then only sees its input close;
one that ignores that (or is busy computing) would run on.

So each bot gets a guard: a tiny ``/bin/sh`` process in a session of its own (terminal
signals do not reach it) that holds the read end of a pipe from the referee and waits
for one line. When the referee's cleanup has killed and reaped the bot's group, it
writes ``disarm`` and the guard exits quietly. When the referee disappears first, the
kernel closes the pipe, the guard reads end of file and sends ``SIGKILL`` to the group.

The guard is best effort: if it cannot be started (no ``/bin/sh``), the bot runs
without one and a warning is logged.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
from typing import Final

import trio

__all__ = ["GUARD_SCRIPT", "GroupGuard"]

log = logging.getLogger(__name__)

GUARD_SCRIPT: Final = 'IFS= read -r word; [ "$word" = disarm ] || kill -s KILL -- "-$1"'
"""The guard's program: ``$1`` is the process group to kill unless told ``disarm``."""

_EXIT_WAIT_S: Final = 1.0


class GroupGuard:
    """The guard of one process group. Obtain one with :meth:`start`."""

    def __init__(self, pgid: int, process: trio.Process) -> None:
        assert isinstance(process.stdin, trio.lowlevel.FdStream)
        self.pgid = pgid
        self._process = process
        self._fd: int | None = process.stdin.fileno()

    @property
    def pid(self) -> int:
        return self._process.pid

    @classmethod
    async def start(cls, pgid: int) -> GroupGuard | None:
        """Start guarding process group ``pgid``; None (and a warning) if the guard
        cannot be started."""
        try:
            process = await trio.lowlevel.open_process(
                ["/bin/sh", "-c", GUARD_SCRIPT, "taki-referee-guard", str(pgid)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("bot process group %d runs unguarded: %s", pgid, exc)
            return None
        return cls(pgid, process)

    def disarm(self) -> None:
        """Tell the guard the group is gone (killed and reaped): it exits without
        killing anything. Idempotent; a guard that already died is no concern."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.write(fd, b"disarm\n")  # a few bytes into an empty pipe: never blocks

    async def close(self) -> None:
        """Disarm the guard, close its pipe and reap it (killing it after a second)."""
        self.disarm()
        with trio.CancelScope(shield=True):
            assert self._process.stdin is not None
            await self._process.stdin.aclose()
            with trio.move_on_after(_EXIT_WAIT_S):
                await self._process.wait()
                return
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            await self._process.wait()
