"""A watchdog that kills a bot's process group if the referee dies without cleaning up.

:func:`referee.shell.process.open_bot_process` kills every bot it started however its block is
left, but nothing in the referee runs when the referee itself is killed with SIGKILL, or
dies with its terminal or of an interpreter crash. A bot then only sees its input close;
one that ignores that (or is busy computing) would run on.

So each bot gets a guard: a tiny ``/bin/sh`` process in a session of its own (terminal
signals do not reach it) that holds the read end of a pipe from the referee. The guard
is started *before* the bot. The bot's process, between ``fork`` and ``exec`` (once it
leads its own session and process group), writes its group id into that pipe
(:meth:`GroupGuard.announce_in_child`), so the guard knows what to kill before the bot's
program runs at all: there is no moment at which a bot runs unguarded.

The guard then waits for one more line. When the referee's cleanup has killed and
reaped the bot's group, it writes ``disarm`` and the guard exits quietly. When the
referee disappears first, the kernel closes the pipe (the bot's own copy of the write
end closes at its ``exec``), the guard reads end of file, stops the group, kills the
children of its leader (for a sandboxed bot, the sandbox's pid 1, which leads a session
of its own: the kernel then kills everything in its pid namespace), every other process
of the bot's session (descendants that moved to another process group with
``setpgid`` stay in the session), and the group. It finds them by reading
``/proc/*/stat`` with shell built-ins only. A grandchild that started a session of its
own (``setsid``) outside a sandbox is out of reach.

The pipe is the guard's only lifeline, on purpose: its end is closed by the kernel when
the referee *process* is gone, whichever of its threads started the guard or the bot. A
parent-death signal would not do (see :mod:`referee.shell.process`).

If the referee dies before the bot was forked, the guard reads end of file without a
group and exits. The guard is best effort: if it cannot be started (no ``/bin/sh``),
the bot runs without one and a warning is logged.
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

GUARD_SCRIPT: Final = """\
IFS= read -r group || exit 0
case $group in ''|*[!0-9]*) exit 0 ;; esac
IFS= read -r word
[ "$word" = disarm ] && exit 0
kill -s STOP -- "-$group" 2>/dev/null
leader=
if IFS= read -r line < "/proc/$group/stat"; then
  set -- ${line##*") "}
  [ "$4" = "$group" ] && leader=$group
fi 2>/dev/null
for pass in 1 2 3 4 5; do
  found=
  for stat in /proc/[0-9]*/stat; do
    IFS= read -r line < "$stat" 2>/dev/null || continue
    set -- ${line##*") "}
    case $1 in Z|X) continue ;; esac
    [ "$4" = "$group" ] || [ "$2" = "$leader" ] || continue
    pid=${stat#/proc/}; pid=${pid%/stat}
    [ "$pid" != "$group" ] || continue
    kill -s KILL "$pid" 2>/dev/null && found=1
  done
  [ "$pass" = 1 ] && kill -s KILL -- "-$group" 2>/dev/null
  [ -n "$found" ] || break
done
"""
"""The guard's program. Its first line names the process group (the bot's pid, which is
also its session id); a second line ``disarm`` means the group is gone. End of file
after the group stops the group (its leader forks nothing more), kills the leader's
children (among them a sandbox's pid 1, in a session of its own: its death ends the
sandbox's pid namespace) and the other members of the session, then the group (the
session's leader, the bot, is in the group; a process that merely reuses its pid, or
the children of one, are spared)."""

_EXIT_WAIT_S: Final = 1.0


class GroupGuard:
    """The guard of one bot's process group. Obtain one with :meth:`start`, before the
    bot is started, and have the bot's process call :meth:`announce_in_child`."""

    def __init__(self, process: trio.Process) -> None:
        assert isinstance(process.stdin, trio.lowlevel.FdStream)
        self._process = process
        self._fd: int | None = process.stdin.fileno()

    @property
    def pid(self) -> int:
        return self._process.pid

    @classmethod
    async def start(cls, what: str) -> GroupGuard | None:
        """Start a guard for the bot ``what`` (a name for the warning); None (and a
        warning) if the guard cannot be started."""
        try:
            process = await trio.lowlevel.open_process(
                ["/bin/sh", "-c", GUARD_SCRIPT, "taki-referee-guard"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("bot %s runs unguarded: %s", what, exc)
            return None
        return cls(process)

    def announce_in_child(self) -> None:
        """Tell the guard to watch the calling process's group.

        Called in the bot's process between ``fork`` and ``exec``, after it became the
        leader of its own session and group (``preexec_fn``): a few bytes into an empty
        pipe, which never blocks. The pipe's write end is close-on-exec, so the bot's
        program does not hold it."""
        if self._fd is not None:
            os.write(self._fd, b"%d\n" % os.getpgrp())

    def disarm(self) -> None:
        """Tell the guard the group is gone (killed and reaped), or was never started:
        it exits without killing anything. Idempotent; a guard that already died is no
        concern."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.write(fd, b"disarm\n")  # a few bytes into a pipe with room: never blocks

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
