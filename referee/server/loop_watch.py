"""What the server's event loop makes its requests wait, told by ``serve --timing``.

Every request, page or game message of the server is a step of a task on one trio
thread: while one step runs, every other request waits. :class:`LoopWatch` measures
that wait three ways and :func:`watch_loop` says it every :data:`REPORT_S` in the
server's log:

* the loop's **lag**: how late a task that sleeps :data:`TICK_S` wakes up (what any
  request arriving then waits before its first step);
* its **busy** share: the time in task steps over the time that passed (near 100%,
  the loop is the bottleneck, whatever the threads do);
* its **slow steps**: steps over :data:`SLOW_STEP_S`, by task, the longest named (the
  work that should be in a thread);
* the tasks that kept it **busiest** (their steps' time, the top :data:`TOP_TASKS`);

and, on a line of their own, the threads of the process that used the most CPU time
(``referee.server.thread_cpu``): a worker thread that computes holds the interpreter
the loop's steps need.

:class:`ArrivalStamps` adds to each answer's ``Server-Timing`` header when the request
reached the application (``arrived``, the machine's monotonic clock in seconds:
``time.monotonic()`` of a client on the same machine reads the same clock) and how long
the application took until its answer began (``app``): a client on the same machine
tells from them the time before the handler (accepting, parsing, the loop's lag) and
after it (sending, its own loop). It tells the machine's uptime, so it is only on with
``--timing``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Final

import attrs
import trio
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Receive, Scope, Send

from referee.server.middleware import edit_headers
from referee.server.thread_cpu import ThreadClock

__all__ = ["REPORT_S", "SLOW_STEP_S", "TICK_S", "ArrivalStamps", "LoopFigures", "LoopWatch",
           "watch_loop"]

#: How often the ticker wakes to measure the loop's lag.
TICK_S: Final = 0.01
#: A task step longer than this is a slow one.
SLOW_STEP_S: Final = 0.02
#: The threads' names are noted every this many ticks.
GLANCE_TICKS: Final = 10
#: How often the figures are told.
REPORT_S: Final = 30.0
#: The busiest tasks told.
TOP_TASKS: Final = 3
#: Task names counted apart in a period at most (the rest together, as "others").
NAMES: Final = 200


def _rank(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)] if ordered else 0.0


@attrs.frozen
class LoopFigures:
    """The loop over one period: seconds, lags (s), busy share, slow steps."""

    seconds: float
    lags: tuple[float, ...]
    busy: float
    slow_steps: int
    slow_seconds: float
    longest: float
    longest_task: str
    #: The busiest tasks, their steps' seconds, busiest first.
    busiest: tuple[tuple[str, float], ...] = ()

    def line(self) -> str:
        """One line of the server's log."""
        lag = (f"lag p50 {_rank(list(self.lags), 0.5) * 1000:.1f} ms,"
               f" p95 {_rank(list(self.lags), 0.95) * 1000:.1f} ms,"
               f" max {max(self.lags, default=0.0) * 1000:.0f} ms")
        slow = (f"{self.slow_steps} steps over {SLOW_STEP_S * 1000:.0f} ms"
                f" ({self.slow_seconds:.2f} s in all)")
        if self.slow_steps:
            slow += f", the longest {self.longest * 1000:.0f} ms in {self.longest_task}"
        top = ", ".join(f"{name} {spent / self.seconds:.0%}" for name, spent in self.busiest)
        return (f"event loop, last {self.seconds:.0f} s: busy {self.busy:.0%}; {lag};"
                f" {slow}; busiest: {top or 'none'}")


class LoopWatch(trio.abc.Instrument):
    """A trio instrument timing every task step, and the lags its ticker records."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        #: When the step running began (None: the watch was added during it).
        self._step_began: float | None = None
        self._reset(clock())

    def _reset(self, now: float) -> None:
        self._since = now
        self._busy = 0.0
        self._slow = 0
        self._slow_seconds = 0.0
        self._longest = 0.0
        self._longest_task = ""
        self._by_task: dict[str, float] = {}
        self.lags: list[float] = []

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self._step_began = self.clock()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if self._step_began is None:
            return
        took = self.clock() - self._step_began
        self._step_began = None
        self._busy += took
        name = task.name if task.name in self._by_task or len(self._by_task) < NAMES \
            else "others"
        self._by_task[name] = self._by_task.get(name, 0.0) + took
        if took >= SLOW_STEP_S:
            self._slow += 1
            self._slow_seconds += took
            if took > self._longest:
                self._longest, self._longest_task = took, task.name

    def take(self) -> LoopFigures:
        """The figures since the last take (or the start), and a new period begun."""
        now = self.clock()
        seconds = max(now - self._since, 1e-9)
        busiest = sorted(self._by_task.items(), key=lambda item: -item[1])[:TOP_TASKS]
        figures = LoopFigures(seconds, tuple(self.lags), min(1.0, self._busy / seconds),
                              self._slow, self._slow_seconds, self._longest,
                              self._longest_task, tuple(busiest))
        self._reset(now)
        return figures


async def watch_loop(say: Callable[[str], None], *,
                     task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Measure the loop's lag and say its figures every REPORT_S, until cancelled."""
    watch = LoopWatch()
    threads = ThreadClock()
    await trio.to_thread.run_sync(threads.take, 1.0)  # the threads' time from now on
    trio.lowlevel.add_instrument(watch)
    try:
        task_status.started()
        told = time.monotonic()
        while True:
            began = time.perf_counter()
            await trio.sleep(TICK_S)
            watch.lags.append(max(0.0, time.perf_counter() - began - TICK_S))
            if len(watch.lags) % GLANCE_TICKS == 0:
                threads.glance()
            if time.monotonic() - told >= REPORT_S:
                seconds, told = time.monotonic() - told, time.monotonic()
                say(watch.take().line())
                shares = await trio.to_thread.run_sync(threads.take, seconds)
                say(ThreadClock.line(seconds, shares))
    finally:
        trio.lowlevel.remove_instrument(watch)


class ArrivalStamps:
    """Adds ``arrived`` and ``app`` to every HTTP answer's ``Server-Timing`` (see the
    module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        arrived = time.monotonic()

        def stamp(headers: MutableHeaders) -> None:
            took = (time.monotonic() - arrived) * 1000
            headers.append("Server-Timing", f'app;dur={took:.1f}, arrived;desc="{arrived:.6f}"')

        await edit_headers(self.app, scope, receive, send, stamp)
