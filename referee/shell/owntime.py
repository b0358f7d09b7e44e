"""A process tree's own time: its wall time less the time the machine kept it off the CPU.

A job that is not a bot's conversation (a submission's build) has a limit of its own
time, which a busy machine does not use up: the tree is sampled every
:data:`SAMPLE_S` (in a thread: a sample reads ``/proc``), and each window credits the
time its processes waited for a CPU while runnable, at most the window
(:func:`referee.core.fairness.kept_off_ms`). The tree is charged the more of that wall
time less the credits and its CPU time spread over the machine's CPUs (a tree that
runs more processes than there are CPUs is kept off them by itself: its CPU time counts
as on a machine of its own), and stopped once that passes its limit or its wall time
reaches its cap.
"""

from __future__ import annotations

import os
from typing import Final

import attrs
import trio

from referee.core import kept_off_ms
from referee.shell.cputime import CpuMeter, CpuSample
from referee.shell.process import BotProcess
from referee.shell.sandbox import WrappedBotProcess

__all__ = ["SAMPLE_S", "OwnTime", "keep_own_time"]

#: How often the tree is sampled, in seconds.
SAMPLE_S: Final = 1.0
_CPUS: Final = os.cpu_count() or 1


@attrs.define
class OwnTime:
    """The own time of one job: ``limit_s`` of it, within ``cap_s`` of wall time."""

    limit_s: float
    cap_s: float
    started: float = attrs.field(factory=trio.current_time)
    #: The time the machine kept the tree off the CPU so far, in seconds.
    credited_s: float = 0.0
    #: The tree's CPU time so far, in seconds.
    cpu_s: float = 0.0
    cpus: int = _CPUS

    def charged_s(self, now: float) -> float:
        """The time charged at ``now``: the more of the wall time less the credits and the
        CPU time spread over the CPUs."""
        return max(now - self.started - self.credited_s, self.cpu_s / self.cpus)

    def deadline(self, now: float, step_s: float = 0.0) -> float:
        """When the job ends, as things stand at ``now`` (Trio's clock): ``now`` once its
        time is up, else when it will be, at least ``step_s`` later (when it is next
        sampled: the machine may keep it off the CPU meanwhile), within the cap."""
        left = self.limit_s - self.charged_s(now)
        if left <= 0:
            return now
        return min(now + max(left, step_s), self.started + self.cap_s)

    def describe(self, now: float) -> str:
        """``300 s of its own time: 450 s of wall time less 150 s the machine kept it off
        the CPU, 120 s of CPU time (at most 900 s of wall time)``."""
        return (f"{self.limit_s:.0f} s of its own time: {now - self.started:.0f} s of wall time"
                f" less {self.credited_s:.0f} s the machine kept it off the CPU,"
                f" {self.cpu_s:.0f} s of CPU time on {self.cpus} CPUs (at most"
                f" {self.cap_s:.0f} s of wall time)")


async def keep_own_time(process: BotProcess, own: OwnTime, scope: trio.CancelScope, *,
                        niceness: int = 0, sample_s: float = SAMPLE_S) -> None:
    """Until cancelled, move ``scope``'s deadline to the end of ``own``'s time, sampling
    the tree of ``process`` (started ``niceness`` levels below the referee: a tree
    lowered further gets no credit) every ``sample_s``. The tree is watched from its
    first process on: a process found later began meanwhile, and all its waits for a
    CPU count."""
    meter = CpuMeter(process.pid, niceness=niceness,
                     wrapped=isinstance(process, WrappedBotProcess))
    scope.deadline = own.deadline(trio.current_time(), sample_s)
    last: CpuSample = await trio.to_thread.run_sync(meter.tree_sample)
    while True:
        await trio.sleep(sample_s)
        sample = await trio.to_thread.run_sync(meter.tree_sample)
        window_ms = (sample.at - last.at) * 1000
        cpu_ms = sample.since(last)
        own.credited_s += kept_off_ms(sample.run_delay_since(last, fresh=True), window_ms,
                                      sample.lowered, cpu_ms=cpu_ms,
                                      runnable=sample.runnable) / 1000
        own.cpu_s += cpu_ms / 1000
        scope.deadline = own.deadline(trio.current_time(), sample_s)
        last = sample
