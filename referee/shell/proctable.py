"""A bot's processes as ``/proc`` shows them: the children of a process, whether one is
alive, the rest of a session. Linux only; elsewhere (no ``/proc``) every answer is empty.

Zombies count as dead: a zombie uses nothing, and reaping the orphans of a killed bot is
init's job. One scan of ``/proc`` costs well under a millisecond on a machine with a
hundred processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

__all__ = ["alive", "children_of", "session_stragglers"]


def _live_processes() -> Iterator[tuple[int, bytes, bytes]]:
    """``(pid, ppid, session)`` of every live process (zombies count as dead), from
    ``/proc``; nothing where there is no ``/proc``. One scan costs well under a
    millisecond on a machine with a hundred processes."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for name in entries:
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            stat = os.read(fd, 512)
        except OSError:
            continue
        finally:
            os.close(fd)
        # "pid (comm) state ppid pgrp session ..."; comm may itself contain parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split(None, 4)
        if len(fields) > 3 and fields[0] not in (b"Z", b"X"):
            yield int(name), fields[1], fields[3]


def children_of(pid: int) -> list[int]:
    """The live children of ``pid``: for a sandboxed bot, the sandbox's pid 1 (which
    leads a session of its own, out of reach of the group kill)."""
    wanted = b"%d" % pid
    return [child for child, ppid, _ in _live_processes() if ppid == wanted]


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return False
    try:
        stat = os.read(fd, 512)
    except OSError:
        return False
    finally:
        os.close(fd)
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


def session_stragglers(sid: int) -> list[int]:
    """Live processes of the session ``sid`` of a bot that has been reaped.

    The bot led the session, so a live process whose pid is ``sid`` is another process
    that got the bot's pid after the session emptied: then nothing is the bot's."""
    wanted = b"%d" % sid
    found = []
    for pid, _, session in _live_processes():
        if session == wanted:
            if pid == sid:
                return []
            found.append(pid)
    return found
