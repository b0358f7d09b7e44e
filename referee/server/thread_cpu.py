"""The CPU time of the server's threads, told by ``serve --timing`` beside its event
loop's figures (``referee.server.loop_watch``).

Every thread of the process shares one interpreter: a worker thread that computes
(a page's rendering, a trim of the logs, a database read) makes the event loop wait
for its turn, and the loop's own figures then show steps that take long while doing
little. This names the threads that held the CPU: each thread's user and system time
from ``/proc/self/task/TID/stat`` (Linux) over the period since the last count, by the
name it had most often when glanced at (:meth:`ThreadClock.glance`, a few times a
second): a Trio worker thread is named after the function it runs (``trim_logs from
...``), and ``Trio thread N`` while idle.
"""

from __future__ import annotations

import os
import threading
from collections import Counter, defaultdict
from pathlib import Path
from typing import Final

import attrs

__all__ = ["ThreadClock", "ThreadShare"]

#: The busiest threads told.
TOP_THREADS: Final = 3
#: How an idle Trio worker thread is named.
IDLE: Final = "Trio thread "
#: Less CPU time than this unaccounted for is the counts' rounding, not ended threads.
ENDED_FLOOR_S: Final = 0.05
#: Clock ticks a second (``/proc``'s unit of CPU time).
_TICKS: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@attrs.frozen
class ThreadShare:
    """A thread's CPU time over a period, in CPUs (seconds of CPU a second)."""

    name: str
    cpus: float


def _process_seconds() -> float:
    """The CPU time of this process (all its threads), not of its children."""
    times = os.times()
    return times.user + times.system


def _cpu_seconds(tid: int) -> float | None:
    """The user and system time of thread ``tid`` of this process, None when it is
    gone (or there is no ``/proc``)."""
    try:
        text = Path(f"/proc/self/task/{tid}/stat").read_text()
    except OSError:
        return None
    # The name (2nd field) is in parentheses and may hold spaces: count after it.
    fields = text.rpartition(")")[2].split()
    try:
        return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime
    except (IndexError, ValueError):
        return None


class ThreadClock:
    """Counts the threads' CPU time from one call of :meth:`take` to the next
    (blocking: a read of ``/proc`` per thread; call it in a worker thread)."""

    def __init__(self) -> None:
        self._counted: dict[int, float] = {}
        #: The process's CPU time at the last take (all its threads, ended ones too).
        self._process = _process_seconds()
        #: The names each thread had when glanced at, this period (idle ones apart).
        self._names: defaultdict[int, Counter[str]] = defaultdict(Counter)

    def glance(self) -> None:
        """Note the name of each thread at work (cheap: no system call)."""
        for thread in threading.enumerate():
            if thread.native_id is not None and not thread.name.startswith(IDLE):
                self._names[thread.native_id][thread.name] += 1

    def take(self, seconds: float) -> tuple[ThreadShare, ...]:
        """The busiest threads over the last ``seconds`` (since the last take: a
        thread not seen then is counted from its start), busiest first. The threads
        that ended meanwhile (a Trio worker thread ends after 10 s idle) count as one,
        ``ended: NAME`` (the name they had most often at work): the process's CPU time
        less its live threads'."""
        now: dict[int, float] = {}
        shares: list[ThreadShare] = []
        process = _process_seconds()
        live = 0.0
        for thread in threading.enumerate():
            tid = thread.native_id
            if tid is None:
                continue
            spent = _cpu_seconds(tid)
            if spent is None:
                continue
            now[tid] = spent
            used = spent - self._counted.get(tid, 0.0)
            live += used
            if used > 0:
                seen = self._names.get(tid)
                name = seen.most_common(1)[0][0] if seen else thread.name
                shares.append(ThreadShare(name, used / max(seconds, 1e-9)))
        ended = process - self._process - live
        if ended > ENDED_FLOOR_S:
            gone = sum((seen for tid, seen in self._names.items() if tid not in now),
                       Counter[str]())
            name = gone.most_common(1)[0][0] if gone else "threads"
            shares.append(ThreadShare(f"ended: {name}", ended / max(seconds, 1e-9)))
        self._counted, self._process = now, process
        self._names.clear()
        shares.sort(key=lambda share: -share.cpus)
        return tuple(shares[:TOP_THREADS])

    @staticmethod
    def line(seconds: float, shares: tuple[ThreadShare, ...]) -> str:
        """One line of the server's log."""
        told = ", ".join(f"{s.name} {s.cpus:.2f}" for s in shares) or "none"
        return f"threads, last {seconds:.0f} s, CPUs: {told}"
