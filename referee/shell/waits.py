"""Watching one timed wait, and the one I/O loop that feeds its pure policy.

The rules of a timed wait are ``referee.core.waiting.WaitPolicy``'s (pure, sans-I/O);
:func:`timed_receive` is the loop that does what it asks: wait for the bot's message
until a time, and sample what it needs when none came by then.

A wait is watched from its *check point* on: half its deadline under the wall basis,
the deadline itself under the CPU basis (``referee.core.clock.TimeBasis``). A bot that
answers before the check point costs nothing more than the wait itself and the cheap
readings of its CPU time (``referee.shell.cpucounter``: under the CPU basis the two it is
charged by; under the wall basis one, as the request goes out). From the check point
on, the bot's process tree, the other bots of the game and the host are sampled
(``referee.shell.cputime``), and again when a window of the wait ends. The figures go to
the pure judgement of ``referee.core.fairness``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import trio
from taki_protocol import Message

from referee.core import (
    Look,
    Measure,
    Need,
    Verdict,
    WaitFigures,
    WaitPolicy,
    min_extension_ms,
)
from referee.shell.cputime import CpuMeter, CpuSample, HostSample, host_sample

if TYPE_CHECKING:
    from referee.shell.bots import BotConnection

__all__ = ["WaitWatch", "timed_receive"]


class WaitWatch:
    """The samples of one wait, from its check point to its end.

    ``meter`` reads the waiting bot's processes (None: a remote bot, whose CPU time
    nobody here can see), ``others`` those of the other bots of the game. ``fresh``:
    the wait is the bot's start, watched from its first process on, so that a process
    found later began meanwhile and all its waits for a CPU count."""

    __slots__ = ("_armed", "_end", "_host", "_mine", "_others", "fresh", "meter", "others")

    def __init__(self, meter: CpuMeter | None, others: Sequence[CpuMeter] = (), *,
                 fresh: bool = False) -> None:
        self.meter = meter
        self.others = tuple(others)
        self.fresh = fresh
        #: The bot's processes when the request went out (:meth:`arm`).
        self._armed: CpuSample | None = None
        self._mine: CpuSample | None = None
        self._others: list[CpuSample] = []
        self._host: HostSample | None = None
        #: The samples that ended the window (:meth:`finish`): the next one begins there.
        self._end: tuple[HostSample, CpuSample | None, list[CpuSample]] | None = None

    def renew(self) -> None:
        """Watch the next window of the wait, which begins where the last one ended
        (no time between the two goes unwatched)."""
        if self._end is None:
            self._host = None
            self.begin()
        else:
            self._host, self._mine, self._others = self._end
            self._end = None

    def arm(self, sample: CpuSample | None = None) -> None:
        """Begin watching a new wait (one watch serves every wait of a seat, one after
        the other): read the bot's CPU time as its request goes out (the cheap reading,
        from files kept open; or ``sample``, such a reading taken already), so that the
        figures tell its CPU time over the whole wait; its waits for a CPU are read from
        the check point on."""
        if sample is None and self.meter is not None:
            sample = self.meter.quick()
        self._armed = sample
        self._mine = self._host = self._end = None
        self._others = []

    def begin(self) -> None:
        """Sample at the check point (once)."""
        if self._host is not None:
            return
        self._host = host_sample()
        self._mine = None if self.meter is None else self.meter.tree_sample()
        self._others = [m.quick() for m in self.others]
        if self._armed is None:  # not armed as the request went out: from here on
            self._armed = self._mine

    def finish(self, wait_ms: float, late_ms: float, answer_waiting: bool,
               host: HostSample) -> WaitFigures:
        """The figures of the window, which ended ``wait_ms`` after the request was sent
        and ``late_ms`` after the time the referee meant to look; ``host`` was sampled
        when it ended, by the referee's thread. May run in another thread."""
        assert self._host is not None, "finish() of a wait that was not begun"
        cpu = delay = None
        runnable = lowered = False
        now = wait_cpu = wait_delay = sampled = None
        if self.meter is not None and self._mine is not None:
            now = self.meter.sample()
            cpu = now.since(self._mine)
            delay = now.run_delay_since(self._mine, self.fresh)
            runnable = self._mine.runnable and now.runnable
            lowered = self._mine.lowered or now.lowered
            if self._armed is not None:
                wait_cpu = round(now.since(self._armed), 1)
                wait_delay = now.run_delay_since(self._armed)
                sampled = round((now.at - self._armed.at) * 1000, 1)
        others_now = [m.quick() for m in self.others]
        others = sum(n.since(s) for n, s in zip(others_now, self._others, strict=True))
        # The samples end when the last one was taken, which a busy host may delay well
        # past ``host``: the window and the wait run until then, so that the figures
        # (a bot's waits for a CPU against its wait, say) cover the same span.
        ended = time.monotonic()
        window_ms = max(0.0, (ended - self._host.at) * 1000)
        wait_ms += max(0.0, (ended - host.at) * 1000)
        self._end = (host, now, others_now)
        return WaitFigures(
            window_ms=window_ms,
            wait_ms=wait_ms,
            cpu_ms=None if cpu is None else round(cpu, 1),
            run_delay_ms=None if delay is None else round(delay, 1),
            others_cpu_ms=others,
            referee_late_ms=late_ms,
            answer_waiting=answer_waiting,
            runnable=runnable,
            lowered_priority=lowered,
            wait_cpu_ms=wait_cpu,
            wait_run_delay_ms=None if wait_delay is None else round(wait_delay, 1),
            wait_sampled_ms=sampled,
            runnable_at_end=now is not None and now.runnable,
            load_per_cpu=host.load_per_cpu,
            cpu_pressure=host.pressure_since(self._host),
        )


async def timed_receive(conn: BotConnection, policy: WaitPolicy, watch: WaitWatch | None,
                        used: Callable[[], float] | None = None) -> tuple[Message | None, Verdict]:
    """The one I/O loop of a timed wait: it does what ``policy`` (pure,
    ``referee.core.waiting``) asks, and returns the bot's message (None: it timed out)
    and the policy's verdict. ``watch`` samples the bot, the game's other bots and the
    host (None: the wait is not judged); ``used`` reads the CPU time the bot's
    processes used since the request, in ms (the CPU basis).

    Nothing is read from ``/proc`` for an answer that comes before the policy's first
    look ends; a look that ends without an answer first reads what waits (a referee
    that ran late finds it there: it is judged as of the time the referee meant to look)."""
    step: Look | Measure | Verdict = policy.first()
    reply: Message | None = None
    while True:
        if isinstance(step, Verdict):
            return reply, step
        if isinstance(step, Measure):
            figures = await _window(conn, watch, policy.start)
            step = policy.measured(trio.current_time(), figures)
            continue
        try:
            reply = await conn.receive(deadline=step.until)
        except trio.TooSlowError:
            within_s = min_extension_ms(policy.span_ms) / 1000
            reply = await _waiting_message(conn, within_s)
            if reply is None:
                step = await _woke(conn, policy, step.then, watch, used)
                if not (isinstance(step, Verdict) and not step.answered):
                    continue
                # Measuring took the referee a while on a busy host: an answer that came
                # meanwhile came while it was late.
                reply = await _waiting_message(conn, within_s)
                if reply is None:
                    continue
        step = policy.answered(trio.current_time(), None if used is None else used())


async def _woke(conn: BotConnection, policy: WaitPolicy, need: Need, watch: WaitWatch | None,
                used: Callable[[], float] | None) -> Look | Measure | Verdict:
    """Measure what the look asked for, and tell the policy."""
    now = trio.current_time()
    if need is Need.BEGIN and watch is not None:
        watch.begin()
    elif need is Need.USED and used is not None:
        if watch is not None:
            watch.begin()
        return policy.woke(now, used_ms=used())
    elif need is Need.WINDOW and watch is not None:
        figures = await _window(conn, watch, policy.start)
        return policy.woke(now, figures=figures)
    return policy.woke(now)


async def _window(conn: BotConnection, watch: WaitWatch | None, start: float) -> WaitFigures:
    """The figures of the watched window, which ends now; the next one begins where it
    ends. The final samples scan ``/proc`` (milliseconds on a busy host): they are taken
    in a thread, so that the other games' clocks do not wait for them."""
    assert watch is not None, "figures asked of an unwatched wait"
    now = trio.current_time()
    waiting = conn.codec.buffered or conn.process.readable_now()
    host = host_sample()  # here: the referee's own wait for a CPU is this thread's
    figures = await trio.to_thread.run_sync(watch.finish, (now - start) * 1000, 0.0,
                                            waiting, host)
    watch.renew()
    return figures


async def _waiting_message(conn: BotConnection, within_s: float) -> Message | None:
    """The message that waits for a referee whose timer ran late (read within
    ``within_s``: a message in the middle of arriving), or None when none waits."""
    if not (conn.codec.buffered or conn.process.readable_now()):
        return None
    try:
        return await conn.receive(deadline=trio.current_time() + within_s)
    except trio.TooSlowError:
        return None
