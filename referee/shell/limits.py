"""Enforced limits on a bot's memory, processes and CPU share, with or without the sandbox.

Three backends, probed once per run (:func:`probe`), the first that works wins:

* **cgroup v2**, where the host delegates the ``memory``, ``pids`` and ``cpu``
  controllers to a writable cgroup: ``memory.max`` (and ``memory.swap.max`` 0),
  ``pids.max``, ``cpu.max``. A bot over its memory is killed by the kernel, which
  ``memory.events`` counts, so the referee can say so.
* **cgroup v1**, with the ``memory``, ``pids`` and ``cpu`` hierarchies mounted and
  writable (as root): ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes``),
  ``pids.max``, ``cpu.cfs_quota_us``; ``memory.oom_control`` counts the kills.
* **prlimit** otherwise: the address space (``RLIMIT_AS``) and the number of processes of
  the user (``RLIMIT_NPROC``, which does not bind root). There is no CPU share: a limit
  on it is refused with this backend. An allocation over the limit fails inside the bot
  (``MemoryError``, ``std::bad_alloc``), which usually crashes it; the referee reports
  that crash as it sees it.

Each bot process gets a cgroup of its own (``taki-referee/<pid>-<n>``), joined between
fork and exec so that everything the bot starts is inside; it is removed once the bot is
gone, and a referee killed before it could do so leaves it for the next referee's
start to remove. With a cgroup backend, a contained or sandboxed bot gets one in the
hierarchy that counts CPU time (v2's own ``cpu.stat``; v1's ``cpuacct``, where it is
mounted and writable) even without a limit: the cheap reading of its CPU time is then
that one counter (:mod:`referee.shell.cpucounter`), which holds everything the bot
started, reaped, orphaned or not. ``TAKI_REFEREE_LIMITS=prlimit`` forces the fallback
(for tests and for hosts where a cgroup would be in the way).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import attrs

from referee.core import HardLimits, UserError

__all__ = ["CgroupHandle", "LimitBackend", "LimitError", "limit_backend", "probe", "sweep"]

_MIB: Final = 1 << 20
CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
#: The cgroup under each hierarchy that holds the bots' cgroups.
PARENT: Final = "taki-referee"
#: CFS period for the CPU share, in microseconds.
CPU_PERIOD_US: Final = 100_000
_names = itertools.count()


class LimitError(UserError):
    """A limit that the backend in force cannot enforce (a setup error, exit 2)."""


@attrs.define
class CgroupHandle:
    """The cgroup directories of one bot process, one per hierarchy (one for v2)."""

    dirs: list[Path]
    limits: HardLimits
    #: The file that counts the kernel's memory kills, and its key.
    oom_file: Path | None

    def join_in_child(self) -> None:
        """Move the calling process into the cgroups (between fork and exec)."""
        pid = str(os.getpid()).encode()
        for d in self.dirs:
            fd = os.open(d / "cgroup.procs", os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def memory_killed(self) -> bool:
        """Whether the kernel killed a process of the bot for its memory limit."""
        if self.oom_file is None:
            return False
        try:
            text = self.oom_file.read_text()
        except OSError:
            return False
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit() and int(value) > 0:
                return True
        return False

    def remove(self) -> None:
        """Remove the cgroups (the bot's processes are gone by then)."""
        for d in self.dirs:
            with contextlib.suppress(OSError):
                d.rmdir()


@attrs.frozen
class LimitBackend:
    """How limits are enforced on this host: ``name`` is printed in a run's first lines."""

    name: str
    #: The hierarchies (v1: memory, pids, cpu; v2: the one), for the cgroup backends.
    roots: tuple[Path, ...] = ()
    #: v1's ``cpuacct`` hierarchy, where the bots' cgroups can be made in it (None:
    #: v2, whose every cgroup counts CPU time, or no CPU counter).
    accounting: Path | None = None

    def counts_cpu(self) -> bool:
        """Whether a bot's cgroup of this backend can count its CPU time."""
        return self.name == "cgroup v2" or self.accounting is not None

    def prepare(self, limits: HardLimits, *, account: bool = False) -> CgroupHandle | None:
        """The cgroups of a new bot process with ``limits`` written (cgroup backends),
        or None (prlimit, or no limit and no ``account``). With ``account``, one of them
        counts the bot's CPU time where this backend can (:meth:`counts_cpu`)."""
        account = account and self.counts_cpu()
        if not (limits or account) or self.name == "prlimit":
            return None
        name = f"{os.getpid()}-{next(_names)}"
        if self.name == "cgroup v2":
            root = self.roots[0]
            d = root / PARENT / name
            d.mkdir(parents=True, exist_ok=True)
            _write_v2(d, limits)
            return CgroupHandle([d], limits, d / "memory.events")
        memory, pids, cpu = self.roots
        dirs = []
        oom_file = None
        for root, wanted in ((memory, limits.memory_mb), (pids, limits.pids),
                             (cpu, limits.cpu_percent)):
            if wanted is None:
                continue
            d = root / PARENT / name
            d.mkdir(parents=True, exist_ok=True)
            dirs.append(d)
        if account and self.accounting is not None:
            d = self.accounting / PARENT / name
            if d.resolve() not in {x.resolve() for x in dirs}:  # cpu,cpuacct: made
                d.mkdir(parents=True, exist_ok=True)
                dirs.append(d)
        _write_v1(memory, pids, cpu, name, limits)
        if limits.memory_mb is not None:
            oom_file = memory / PARENT / name / "memory.oom_control"
        return CgroupHandle(dirs, limits, oom_file)

    def rlimits(self, limits: HardLimits) -> list[tuple[int, int, int]]:
        """The ``setrlimit`` triples of the prlimit backend (none for the cgroups)."""
        if self.name != "prlimit":
            return []
        out = []
        if limits.memory_mb is not None:
            size = limits.memory_mb * _MIB
            out.append((resource.RLIMIT_AS, size, size))
        if limits.pids is not None:
            out.append((resource.RLIMIT_NPROC, limits.pids, limits.pids))
        return out

    def check(self, limits: HardLimits) -> None:
        """LimitError for a limit this backend cannot enforce."""
        if self.name == "prlimit" and limits.cpu_percent is not None:
            raise LimitError(
                "--cpu-percent needs cgroups (v2 with the cpu controller delegated, or v1"
                " as root); this host offers only prlimit (docs/sandbox.md)"
            )


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _nice_weight_v1(niceness: int) -> int:
    """``cpu.shares`` of a cgroup niced by ``niceness`` levels (the kernel's weight of
    a nice value, 1024 at 0, about 1.25 times less at each level)."""
    return max(2, round(1024 / 1.25 ** niceness))


def _write_v2(d: Path, limits: HardLimits) -> None:
    if limits.memory_mb is not None:
        _write(d / "memory.max", str(limits.memory_mb * _MIB))
        with contextlib.suppress(OSError):
            _write(d / "memory.swap.max", "0")
    if limits.pids is not None:
        _write(d / "pids.max", str(limits.pids))
    if limits.cpu_percent is not None:
        quota = CPU_PERIOD_US * limits.cpu_percent // 100
        _write(d / "cpu.max", f"{quota} {CPU_PERIOD_US}")
    if limits.niceness is not None:
        with contextlib.suppress(OSError):  # a kernel before cpu.weight.nice
            _write(d / "cpu.weight.nice", str(limits.niceness))


def _write_v1(memory: Path, pids: Path, cpu: Path, name: str, limits: HardLimits) -> None:
    if limits.memory_mb is not None:
        d = memory / PARENT / name
        size = str(limits.memory_mb * _MIB)
        _write(d / "memory.limit_in_bytes", size)
        with contextlib.suppress(OSError):  # only with swap accounting
            _write(d / "memory.memsw.limit_in_bytes", size)
    if limits.pids is not None:
        _write(pids / PARENT / name / "pids.max", str(limits.pids))
    if limits.cpu_percent is not None:
        d = cpu / PARENT / name
        _write(d / "cpu.cfs_period_us", str(CPU_PERIOD_US))
        _write(d / "cpu.cfs_quota_us", str(CPU_PERIOD_US * limits.cpu_percent // 100))
        if limits.niceness is not None:
            _write(d / "cpu.shares", str(_nice_weight_v1(limits.niceness)))


def _writable_v2(root: Path) -> bool:
    try:
        controllers = set((root / "cgroup.controllers").read_text().split())
    except OSError:
        return False
    return {"memory", "pids", "cpu"} <= controllers and _try_mkdir(root)


def _try_mkdir(root: Path) -> bool:
    probe_dir = root / PARENT / f"probe-{os.getpid()}"
    try:
        probe_dir.mkdir(parents=True, exist_ok=True)
        probe_dir.rmdir()
    except OSError:
        return False
    return True


def probe(root: Path = CGROUP_ROOT, env: Callable[[str], str | None] = os.environ.get,
          ) -> LimitBackend:
    """The backend in force on this host (once per run). The cgroups that referees
    killed before they could remove them are removed first (:func:`sweep`)."""
    if env("TAKI_REFEREE_LIMITS") != "prlimit":
        if _writable_v2(root):
            sweep(root / PARENT)
            return LimitBackend("cgroup v2", (root,))
        v1 = tuple(root / name for name in ("memory", "pids", "cpu"))
        if all((r / "cgroup.procs").exists() for r in v1) and all(_try_mkdir(r) for r in v1):
            for r in v1:
                sweep(r / PARENT)
            accounting = _accounting_v1(root)
            if accounting is not None:
                sweep(accounting / PARENT)
            return LimitBackend("cgroup v1", v1, accounting)
    return LimitBackend("prlimit")


def _accounting_v1(root: Path) -> Path | None:
    """v1's ``cpuacct`` hierarchy, where the bots' cgroups can be made in it (the
    same directory as ``cpu`` where both are mounted together)."""
    for name in ("cpuacct", "cpu,cpuacct"):
        r = root / name
        if (r / "cpuacct.usage").exists() and _try_mkdir(r):
            return r
    cpu = root / "cpu"
    return cpu if (cpu / "cpuacct.usage").exists() and _try_mkdir(cpu) else None


#: A cgroup left behind is removed only after this many seconds (never one that
#: another referee has just made and is about to join).
SWEEP_AGE_S: Final = 60.0


def sweep(parent: Path, now: float | None = None) -> list[Path]:
    """Remove the empty cgroups under ``parent`` (``<pid>-<n>``, ``probe-<pid>``) whose
    referee (``pid``) is gone and that are older than :data:`SWEEP_AGE_S`: what a
    referee killed with SIGKILL left. The kernel refuses to remove a cgroup that holds
    a process. Returns those removed."""
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for d in entries:
        pid = d.name.removeprefix("probe-").partition("-")[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            if now - d.stat().st_mtime >= SWEEP_AGE_S:
                d.rmdir()
                removed.append(d)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_IN_FORCE: LimitBackend | None = None


def limit_backend() -> LimitBackend:
    """The backend of this run: probed on first use, then kept."""
    global _IN_FORCE
    if _IN_FORCE is None:
        _IN_FORCE = probe()
    return _IN_FORCE
