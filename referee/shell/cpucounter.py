"""The cheap reading of a bot's CPU time, which every request under the CPU basis takes
twice: from files kept open and re-read with ``pread`` (no path lookups, no directory
listings once the bot's processes are known).

Where the bot has a cgroup of its own that counts CPU time, that counter alone: one read
covers everything the bot started, reaped or not (the referee makes one for every
contained or sandboxed bot where it can: ``referee.shell.limits``). It also holds the
bot's wrapper (``bwrap``), whose processes only wait while the bot runs: between two
readings they add nothing (their start-up comes before the first). Else the bot's process tree, each
process once it is found: its CPU clock (all its threads, one system call), its ``stat``
(the children it reaped, its state and how many threads it has) and its threads'
``children`` files (read again when its number of threads changed). A process that is
gone, or a zombie, counts nothing and its files are closed.

A process whose CPU clock has not moved since its last reading has not run: it cannot
have reaped a child, started or ended a thread, or exited, so its ``stat`` is not read
again (a waiting wrapper, such as the processes of the bot's containment, costs one
clock reading and its ``children``). Its ``children`` are read every time: an orphan is
given to its new parent without that parent running.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["TreeCounter", "process_cpu_ms", "reaped_ms"]

_TICK_MS: Final = 1000.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
#: The most processes of one bot that are read.
MAX_PROCESSES: Final = 4096


def process_cpu_ms(pid: int) -> float | None:
    """The CPU time of all the threads of process ``pid`` (live or ended), from its CPU
    clock; None once it is gone (or where there is no such clock)."""
    clock = ((~pid) << 3) | 2  # the kernel's CPU clock of a process (CPUCLOCK_SCHED)
    try:
        return time.clock_gettime_ns(clock) / 1e6
    except (OSError, OverflowError, AttributeError):
        return None


def reaped_ms(fields: list[bytes] | None) -> float:
    """``cutime + cstime`` of a process (its reaped children), in ms, from the fields of
    its ``stat`` after the command name."""
    if fields is None or len(fields) < 15:
        return 0.0
    return (int(fields[13]) + int(fields[14])) * _TICK_MS


def _open(path: Path | str) -> int | None:
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def _close(fds: Sequence[int | None]) -> None:
    for fd in fds:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


_DEAD: Final = (b"Z", b"X")


class _Process:
    """The open files of one process of the bot."""

    __slots__ = ("children", "clock", "pid", "reaped", "seen", "stat", "threads")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.clock = ((~pid) << 3) | 2  # the process's CPU clock (see process_cpu_ms)
        self.stat = _open(f"/proc/{pid}/stat")
        self.threads = 0
        self.children: list[int] = []
        #: Its CPU clock (ns) when its ``stat`` was last read (-1: never), and the CPU
        #: time of the children it had reaped then (ms).
        self.seen = -1
        self.reaped = 0.0

    def close(self) -> None:
        _close([self.stat, *self.children])
        self.stat, self.children = None, []

    def _open_children(self, threads: int) -> None:
        _close(self.children)
        try:
            tids = os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            tids = []
        opened = (_open(f"/proc/{self.pid}/task/{tid}/children") for tid in tids)
        self.children = [fd for fd in opened if fd is not None]
        self.threads = threads

    def read(self) -> tuple[float, list[int]] | None:
        """Its CPU time with its reaped children's, and its live children; None once it
        is gone or a zombie. (Every request reads this twice: kept to a few calls.)"""
        if self.stat is None:
            return None
        try:
            cpu = time.clock_gettime_ns(self.clock)
        except (OSError, OverflowError):
            return None
        if cpu != self.seen:  # it ran since its stat was read (see the module docstring)
            try:
                data = os.pread(self.stat, 1024, 0)
            except OSError:
                return None
            fields = data[data.rfind(b")") + 2:].split(None, 18)
            if len(fields) < 18 or fields[0] in _DEAD:
                return None
            self.seen = cpu
            self.reaped = (int(fields[13]) + int(fields[14])) * _TICK_MS
            threads = int(fields[17])
            if threads != self.threads:
                self._open_children(threads)
        kids: list[int] = []
        for fd in self.children:
            try:
                listed = os.pread(fd, 4096, 0)
            except OSError:
                continue
            if listed:
                kids.extend(map(int, listed.split()))
        return cpu / 1e6 + self.reaped, kids


def _counter_file(dirs: Sequence[Path]) -> tuple[Path, bool] | None:
    """The file of the first cgroup of ``dirs`` that counts CPU time, and whether it is
    cgroup v1's ``cpuacct.usage`` (nanoseconds) rather than v2's ``cpu.stat``."""
    for d in dirs:
        if (d / "cpuacct.usage").exists():
            return d / "cpuacct.usage", True
        if (d / "cpu.stat").exists():
            return d / "cpu.stat", False
    return None


class TreeCounter:
    """Reads the CPU time of the bot whose root process is ``pid`` (see the module
    docstring); ``cgroup_dirs``: the bot's own cgroups. :meth:`close` closes its files."""

    def __init__(self, pid: int, cgroup_dirs: Sequence[Path]) -> None:
        self.pid = pid
        self.cgroup: int | None = None
        self.cgroup_v1 = False
        found = _counter_file(cgroup_dirs) if cgroup_dirs else None
        if found is not None:
            self.cgroup, self.cgroup_v1 = _open(found[0]), found[1]
        self.processes: dict[int, _Process] = {}

    def close(self) -> None:
        _close([self.cgroup])
        self.cgroup = None
        for process in self.processes.values():
            process.close()
        self.processes = {}

    def cgroup_ms(self) -> float | None:
        """The bot's cgroup counter, in ms (None: it has none). Every request under the
        CPU basis reads it twice: one ``pread``, and v2's ``usage_usec`` is looked for
        on the first line (where the kernel writes it) before the others."""
        fd = self.cgroup
        if fd is None:
            return None
        try:
            data = os.pread(fd, 1024, 0)
        except OSError:
            return None
        if self.cgroup_v1:
            try:
                return int(data) / 1e6
            except ValueError:
                return None
        if data.startswith(b"usage_usec "):
            value = data[11:].partition(b"\n")[0]
            if value.isdigit():
                return int(value) / 1e3
        for line in data.splitlines():
            key, _, value = line.partition(b" ")
            if key == b"usage_usec" and value.strip().isdigit():
                return int(value) / 1e3
        return None

    def by_pid(self) -> dict[int, float]:
        """The CPU time of each live process of the tree (reaped children included in
        their parent's), in ms."""
        found: dict[int, float] = {}
        pending = [self.pid]
        while pending and len(found) < MAX_PROCESSES:
            pid = pending.pop()
            if pid in found:
                continue
            process = self.processes.get(pid)
            if process is None:
                process = self.processes[pid] = _Process(pid)
            read = process.read()
            if read is None:
                continue
            found[pid], kids = read
            pending.extend(kids)
        if len(self.processes) != len(found):  # every process found is one of them
            for pid in [p for p in self.processes if p not in found]:
                self.processes.pop(pid).close()
        return found
