"""The host-wide counters of ``/proc``, frozen for every local bot.

Files such as ``/proc/loadavg`` (the number of threads on the host), ``/proc/meminfo``,
``/proc/stat``, ``/proc/vmstat``, ``/proc/pressure/*`` or ``/proc/sys/fs/file-nr``
count what every process of the machine does. Two bots of one game could pass each
other bits through them: one starts threads or allocates memory, the other watches the
count. Runtimes read some of them at start (the memory and CPUs of the machine: the
JVM, Node.js, .NET, Go's and glibc's CPU count from ``/proc/stat``), so they are not
hidden but replaced: each bot gets, bound read-only over the file (bwrap's
``--ro-bind-data``), the content the file had when this referee process first started
a bot. That content never changes while the referee runs: it carries nothing from one
bot to another. Files that tell only what the host does, and nothing a program needs
(``/proc/keys`` with the names of root's keys, ``/proc/locks``, ``/proc/timer_list``
and the like), are replaced by empty files.
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import Final

__all__ = ["EMPTY", "FROZEN", "mask_options"]

#: Counters of the whole host, replaced by their content at the referee's start.
FROZEN: Final = (
    "/proc/loadavg", "/proc/meminfo", "/proc/stat", "/proc/vmstat", "/proc/uptime",
    "/proc/diskstats", "/proc/interrupts", "/proc/softirqs", "/proc/schedstat",
    "/proc/zoneinfo", "/proc/buddyinfo", "/proc/pagetypeinfo", "/proc/swaps",
    "/proc/cgroups", "/proc/pressure/cpu", "/proc/pressure/io", "/proc/pressure/memory",
    "/proc/pressure/irq", "/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr",
    "/proc/sys/fs/inode-state", "/proc/sys/fs/dentry-state", "/proc/sys/fs/aio-nr",
    "/proc/sys/kernel/pty/nr", "/proc/sys/kernel/random/entropy_avail",
)
#: What the host holds and no bot needs, replaced by empty files.
EMPTY: Final = (
    "/proc/keys", "/proc/key-users", "/proc/locks", "/proc/timer_list",
    "/proc/sched_debug", "/proc/kallsyms", "/proc/vmallocinfo", "/proc/slabinfo",
    "/proc/sysrq-trigger",
)
_MAX_BYTES: Final = 1 << 20


@functools.cache
def _contents() -> tuple[tuple[str, bytes], ...]:
    """Each masked file that exists here, with what the bots see instead."""
    out = []
    for path in FROZEN:
        with contextlib.suppress(OSError), open(path, "rb") as f:
            out.append((path, f.read(_MAX_BYTES)))
    out += [(path, b"") for path in EMPTY if os.path.exists(path)]
    return tuple(out)


def mask_options() -> tuple[list[str], tuple[int, ...]]:
    """bwrap's options that bind the masks over a ``/proc`` mounted before them, and
    the descriptors they read (new ones: the caller passes them on and closes them).
    Blocking (the first call reads the files)."""
    options: list[str] = []
    fds: list[int] = []
    try:
        for path, data in _contents():
            fd = os.memfd_create("taki-referee-proc", os.MFD_CLOEXEC)
            fds.append(fd)
            os.write(fd, data)  # a memfd takes the whole write at once
            os.lseek(fd, 0, os.SEEK_SET)
            options += ["--ro-bind-data", str(fd), path]
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return options, tuple(fds)
