"""Watching one timed wait: the figures that tell whose fault a timeout was.

A wait is watched from its *check point* on: half its deadline under the wall basis,
the deadline itself under the CPU basis (``referee.core.clock.TimeBasis``). A bot that
answers before the check point costs nothing more than the wait itself; from the check
point on, the bot's process tree, the other bots of the game and the host are sampled
(``referee.shell.cputime``), and again when the wait ends, late. The figures go to the
pure judgement of ``referee.core.fairness``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Final

from referee.core import WaitFigures
from referee.shell.cputime import CpuMeter, CpuSample, HostSample, host_sample

__all__ = ["WALL_CHECK_SHARE", "WaitWatch"]

#: Under the wall basis, the share of the deadline after which a wait is watched.
WALL_CHECK_SHARE: Final = 0.5


class WaitWatch:
    """The samples of one wait, from its check point to its end.

    ``meter`` reads the waiting bot's processes (None: a remote bot, whose CPU time
    nobody here can see), ``others`` those of the other bots of the game."""

    __slots__ = ("_host", "_mine", "_others", "meter", "others")

    def __init__(self, meter: CpuMeter | None, others: Sequence[CpuMeter] = ()) -> None:
        self.meter = meter
        self.others = tuple(others)
        self._mine: CpuSample | None = None
        self._others: list[CpuSample] = []
        self._host: HostSample | None = None

    @property
    def begun(self) -> bool:
        return self._host is not None

    def watched_s(self) -> float:
        """How long the wait has been watched, in seconds."""
        return 0.0 if self._host is None else time.monotonic() - self._host.at

    def begin(self) -> None:
        """Sample at the check point (once)."""
        if self._host is not None:
            return
        self._host = host_sample()
        self._mine = None if self.meter is None else self.meter.tree_sample()
        self._others = [m.quick() for m in self.others]

    def finish(self, wait_ms: float, late_ms: float, answer_waiting: bool,
               host: HostSample, read_late: bool = False) -> WaitFigures:
        """The figures of the wait, which ended ``wait_ms`` after the request was sent
        and ``late_ms`` after its deadline (0 when it ended in time); ``host`` was
        sampled when it ended, by the referee's thread. May run in another thread.

        The referee's lateness: when its timer ended the wait, how late the timer ran.
        When it read an answer after the deadline (``read_late``), the answer may have
        come in time only if the referee was kept from reading it, so its lateness is
        at most how long its thread waited for a CPU over the window."""
        assert self._host is not None, "finish() of a wait that was not begun"
        window_ms = max(0.0, (host.at - self._host.at) * 1000)
        cpu = delay = None
        runnable = lowered = False
        if self.meter is not None and self._mine is not None:
            now = self.meter.sample()
            cpu = now.since(self._mine)
            delay = now.run_delay_since(self._mine)
            runnable = self._mine.runnable and now.runnable
            lowered = self._mine.lowered or now.lowered
        others = sum(m.quick().since(s) for m, s in zip(self.others, self._others, strict=True))
        return WaitFigures(
            window_ms=window_ms,
            wait_ms=wait_ms,
            cpu_ms=None if cpu is None else round(cpu, 1),
            run_delay_ms=None if delay is None else round(delay, 1),
            others_cpu_ms=others,
            referee_late_ms=min(late_ms, host.referee_delay_since(self._host)) if read_late
            else late_ms,
            answer_waiting=answer_waiting,
            answer_late_ms=round(late_ms, 1) if read_late else None,
            runnable=runnable,
            lowered_priority=lowered,
            load_per_cpu=host.load_per_cpu,
            cpu_pressure=host.pressure_since(self._host),
        )
