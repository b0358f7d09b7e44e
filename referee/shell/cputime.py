"""CPU time of a bot's processes, and the host's state, for judging timed waits.

A bot's CPU time is its whole process tree's: the bot's own process (all its threads,
from its CPU clock, to the nanosecond), every live descendant found from
``/proc/PID/task/TID/children`` (which also reaches everything in a sandbox's pid
namespace), and the children they reaped (``cutime`` and ``cstime``, in clock ticks).
A *thorough* sample (:meth:`CpuMeter.sample`, taken only when a wait has lasted a
while) also counts the processes of the bot's session that left its tree (an orphan
reparented to init), and how long every thread of the bot waited for a CPU while
runnable (``/proc/PID/task/TID/schedstat``). A process found at the end of a wait that
was not there at its start counts with all its CPU time: the bot is never charged less
than it used. Where the bot has a cgroup of its own with a CPU counter, the cgroup's
count is used when it is larger. A bot started through a wrapper (``bwrap``, its
containment or sandbox) is counted from the wrapper's one child on, the first process of
its pid namespace, which holds everything the bot runs and reaps its orphans
(:class:`CpuMeter`).

The referee's own lateness comes from its thread's wait for a CPU (its ``schedstat``),
the host's from ``/proc/loadavg`` and ``/proc/pressure/cpu``. Everything degrades to
"unknown" (None) where ``/proc`` does not tell, and nothing here raises.

Costs (``benchmarks/ipc.py`` measures a decision): a quick reading (the CPU basis, twice
a decision) re-reads files kept open (``referee.shell.cpucounter``): the bot's cgroup
counter where it has one, else each of its processes' CPU clock and threads'
``children``, and the ``stat`` of those whose clock moved (a few microseconds a process);
a request answered before its check point reads nothing else. A thorough
sample scans ``/proc`` (a few milliseconds on a busy host), and is taken only by waits
that reached their check point.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Final, NamedTuple

import attrs

from referee.shell.cpucounter import TreeCounter, process_cpu_ms, reaped_ms
from referee.shell.limits import CGROUP_ROOT, PARENT

__all__ = ["CpuMeter", "CpuSample", "HostSample", "host_sample", "load_per_cpu",
           "own_cgroup_dirs"]

_CPUS: Final = os.cpu_count() or 1
_OWN_NICE: Final = os.getpriority(os.PRIO_PROCESS, 0) if hasattr(os, "getpriority") else 0


def _read(path: str, size: int = 1024) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name: state first."""
    data = _read(f"/proc/{pid}/stat", 1024)
    if not data:
        return None
    return data[data.rfind(b")") + 2:].split()


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        data = _read(f"/proc/{pid}/task/{tid}/children", 4096)
        if data:
            found.extend(int(c) for c in data.split())
    return found


def _threads(pid: int) -> tuple[float, bool]:
    """How long the threads of ``pid`` waited for a CPU while runnable (ms; the kernel
    counts a wait when it ends), and whether one of them is runnable now (state R)."""
    total = 0
    runnable = False
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0, False
    for tid in tids:
        data = _read(f"/proc/{pid}/task/{tid}/schedstat", 128)
        if data:
            fields = data.split()
            if len(fields) > 1:
                total += int(fields[1])
        stat = _read(f"/proc/{pid}/task/{tid}/stat", 512)
        if stat and stat[stat.rfind(b")") + 2:][:1] == b"R":
            runnable = True
    return total / 1e6, runnable


def _lowered(pid: int, fields: list[bytes] | None, niceness: int = 0) -> bool:
    """Whether process ``pid`` runs at a lower priority than the referee started it
    at (``niceness`` levels below its own): a higher nice value, or an autogroup (its
    session's share) niced above ``niceness``."""
    if fields is not None and len(fields) > 16:
        with contextlib.suppress(ValueError):
            if int(fields[16]) > _OWN_NICE + niceness:
                return True
    data = _read(f"/proc/{pid}/autogroup", 128)
    if data:
        parts = data.split()
        with contextlib.suppress(ValueError, IndexError):
            return parts[-2] == b"nice" and int(parts[-1]) > niceness
    return False


def _session_members(sid: int) -> list[int]:
    """Live processes of session ``sid`` (a full scan of ``/proc``)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    wanted = b"%d" % sid
    found = []
    for name in names:
        if not name.isdigit():
            continue
        fields = _stat_fields(int(name))
        if fields is not None and len(fields) > 3 and fields[3] == wanted:
            found.append(int(name))
    return found


class CpuSample(NamedTuple):
    """CPU figures of one bot's processes at one moment. (A named tuple: every request
    makes two, and a tuple is made several times faster than a frozen class.)"""

    #: Trio-independent monotonic time of the sample, in seconds.
    at: float
    #: CPU time by process, in ms (reaped children's included in their parent's).
    by_pid: dict[int, float]
    #: Their threads' wait for a CPU by process, in ms (not in quick samples: None).
    delay_by_pid: dict[int, float] | None
    #: The bot's cgroup CPU counter, in ms, when it has one.
    cgroup_ms: float | None = None
    #: Whether a thread of the processes was runnable (running or waiting for a CPU)
    #: at the sample (not in quick samples: False).
    runnable: bool = False
    #: Whether one of them lowered its priority below the referee's (thorough only).
    lowered: bool = False

    def since(self, earlier: CpuSample) -> float:
        """CPU time used between ``earlier`` and this sample, in ms: processes that
        were not there before count with all their time, and none counts less than 0."""
        if self.cgroup_ms is not None and earlier.cgroup_ms is not None:
            cgroup = max(0.0, self.cgroup_ms - earlier.cgroup_ms)
            if not (self.by_pid and earlier.by_pid):  # a quick reading of the cgroup
                return cgroup
        else:
            cgroup = 0.0
        used = 0.0
        before = earlier.by_pid.get
        for pid, ms in self.by_pid.items():
            ms -= before(pid, 0.0)
            if ms > 0.0:
                used += ms
        return used if used > cgroup else cgroup

    def run_delay_since(self, earlier: CpuSample) -> float | None:
        """How long the processes of both samples waited for a CPU in between, in ms
        (a process of one sample only is left out: its wait is not known)."""
        if self.delay_by_pid is None or earlier.delay_by_pid is None:
            return None
        before = earlier.delay_by_pid
        return sum(max(0.0, ms - before[pid]) for pid, ms in self.delay_by_pid.items()
                   if pid in before)


def _cgroup_ms(dirs: Sequence[Path]) -> float | None:
    for d in dirs:
        data = _read(str(d / "cpuacct.usage"), 64)
        if data is not None and data.strip().isdigit():
            return int(data) / 1e6
        data = _read(str(d / "cpu.stat"), 1024)
        if data is not None:
            for line in data.splitlines():
                key, _, value = line.partition(b" ")
                if key == b"usage_usec" and value.strip().isdigit():
                    return int(value) / 1e3
    return None


def own_cgroup_dirs(pid: int, root: Path = CGROUP_ROOT) -> tuple[Path, ...]:
    """The directories of the cgroups that the limits backend made for the bot ``pid``
    alone (``.../taki-referee/NAME``) and that count CPU time, from ``/proc/PID/cgroup``."""
    data = _read(f"/proc/{pid}/cgroup", 4096)
    found = []
    for line in (data or b"").decode(errors="replace").splitlines():
        _, controllers, path = ([*line.split(":", 2), "", ""])[:3]
        if f"/{PARENT}/" not in path + "/":
            continue
        relative = path.lstrip("/")
        if controllers == "":
            found.append(root / relative)
        elif "cpuacct" in controllers.split(","):
            found.append(root / controllers / relative)
    return tuple(found)


class CpuMeter:
    """Reads the CPU time of one bot's process tree, and its own cgroup's CPU counter
    when it has one. ``pid`` is the process the referee started, which leads the bot's
    session; with ``wrapped``, it is a wrapper (``bwrap``, the bot's containment) that
    only waits for its one child, the first process of the bot's pid namespace, which
    holds everything the bot runs and reaps every orphan of it: the bot's CPU time is
    counted from that child on, by the quick readings and the thorough samples alike
    (the wrapper's own, its start-up, is not the bot's, and reading it would cost each
    reading a third more).

    :meth:`close` closes the files that :meth:`quick` keeps open."""

    def __init__(self, pid: int, cgroup_dirs: Sequence[Path] | None = None, *,
                 niceness: int = 0, wrapped: bool = False) -> None:
        self.pid = pid
        #: How many levels below the referee's the referee started it at: a bot lowered
        #: further chose to yield.
        self.niceness = niceness
        self.cgroup_dirs = own_cgroup_dirs(pid) if cgroup_dirs is None else tuple(cgroup_dirs)
        self.wrapped = wrapped
        #: Where the bot's tree begins: ``pid``, or the wrapper's child once it is found.
        self._root: int | None = None if wrapped else pid
        self._counter: TreeCounter | None = None

    def close(self) -> None:
        """Close the files of the cheap reading (idempotent; it opens them again when
        read once more)."""
        if self._counter is not None:
            self._counter.close()
            self._counter = None

    def __del__(self) -> None:
        self.close()

    @property
    def root(self) -> int:
        """The first process of the bot's tree: the wrapper's one child once it has
        one (found once), ``pid`` until then or without a wrapper."""
        if self._root is not None:
            return self._root
        children = _children(self.pid)
        if len(children) == 1:
            self._root = children[0]
            return self._root
        return self.pid

    def _tree(self) -> list[int]:
        pids = [self.root]
        index = 0
        while index < len(pids) and len(pids) < 4096:
            pids.extend(c for c in _children(pids[index]) if c not in pids)
            index += 1
        return pids

    def _measure(self, pids: Iterable[int], thorough: bool) -> CpuSample:
        by_pid: dict[int, float] = {}
        delay: dict[int, float] | None = {} if thorough else None
        runnable = lowered = False
        for pid in pids:
            cpu = process_cpu_ms(pid)
            if cpu is None:
                continue
            fields = _stat_fields(pid)
            by_pid[pid] = cpu + reaped_ms(fields)
            if delay is not None:
                delay[pid], running = _threads(pid)
                runnable = runnable or running
                lowered = lowered or _lowered(pid, fields, self.niceness)
        cgroup = _cgroup_ms(self.cgroup_dirs) if self.cgroup_dirs else None
        return CpuSample(time.monotonic(), by_pid, delay, cgroup, runnable, lowered)

    def quick(self) -> CpuSample:
        """The tree's CPU time now (for charging CPU time), the cheap way
        (``referee.shell.cpucounter``): one read of the bot's cgroup counter, or of its
        processes' files kept open; no session scan, no waits for a CPU."""
        counter = self._counter
        root = self.root if self._root is None else self._root
        if counter is None or counter.pid != root:
            if counter is not None:
                counter.close()
            counter = self._counter = TreeCounter(root, self.cgroup_dirs)
        cgroup = counter.cgroup_ms()
        if cgroup is not None:
            return CpuSample(time.monotonic(), {}, None, cgroup)
        return CpuSample(time.monotonic(), counter.by_pid(), None)

    def used_since(self, before: CpuSample) -> Callable[[], float]:
        """What reads the CPU time the tree used since ``before`` (a quick reading), in
        ms, the cheap way, each time it is called: a reading of the cgroup counter
        alone is compared with ``before``'s as it is read (no sample is made)."""
        counter, start = self._counter, before.cgroup_ms
        if counter is None or start is None or before.by_pid:
            return lambda: self.quick().since(before)

        def used() -> float:
            now = counter.cgroup_ms()
            if now is None:  # its files were closed, or its root changed meanwhile
                return self.quick().since(before)
            return max(0.0, now - start)

        return used

    def tree_sample(self) -> CpuSample:
        """The tree's CPU time and its threads' wait for a CPU (no session scan)."""
        return self._measure(self._tree(), thorough=True)

    def sample(self) -> CpuSample:
        """The tree's and the rest of the session's CPU time, and their threads' wait
        for a CPU (for judging a timeout); a wrapper is left out, as from the tree."""
        pids = self._tree()
        left_out = {*pids, self.pid}
        pids.extend(p for p in _session_members(self.pid) if p not in left_out)
        return self._measure(pids, thorough=True)


@attrs.frozen
class HostSample:
    """The referee's and the host's state at one moment."""

    at: float
    #: How long the referee's thread has waited for a CPU, in ms (None: unknown).
    referee_delay_ms: float | None
    #: ``some`` total of ``/proc/pressure/cpu``, in ms.
    pressure_ms: float | None
    #: One-minute load average per CPU.
    load_per_cpu: float | None

    def referee_delay_since(self, earlier: HostSample) -> float:
        if self.referee_delay_ms is None or earlier.referee_delay_ms is None:
            return 0.0
        return max(0.0, self.referee_delay_ms - earlier.referee_delay_ms)

    def pressure_since(self, earlier: HostSample) -> float | None:
        if self.pressure_ms is None or earlier.pressure_ms is None or self.at <= earlier.at:
            return None
        share = (self.pressure_ms - earlier.pressure_ms) / ((self.at - earlier.at) * 1000)
        return round(min(1.0, max(0.0, share)), 3)


def load_per_cpu() -> float | None:
    """The host's one-minute load average per CPU (None: unknown)."""
    data = _read("/proc/loadavg", 128)
    if not data:
        return None
    try:
        return round(float(data.split()[0]) / _CPUS, 2)
    except (ValueError, IndexError):
        return None


def host_sample() -> HostSample:
    """The referee's thread's wait for a CPU so far, and the host's CPU pressure and load."""
    delay = None
    data = _read("/proc/thread-self/schedstat", 128)
    if data:
        with contextlib.suppress(ValueError, IndexError):
            delay = int(data.split()[1]) / 1e6
    pressure = None
    data = _read("/proc/pressure/cpu", 256)
    if data:
        for part in data.splitlines()[0].split():
            if part.startswith(b"total="):
                with contextlib.suppress(ValueError):
                    pressure = int(part[6:]) / 1e3
    return HostSample(time.monotonic(), delay, pressure, load_per_cpu())
