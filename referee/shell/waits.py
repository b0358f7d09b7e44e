"""Watching one timed wait: the figures that tell whose fault a timeout was.

A wait is watched from its *check point* on: half its deadline under the wall basis,
the deadline itself under the CPU basis (``referee.core.clock.TimeBasis``). A bot that
answers before the check point costs nothing more than the wait itself; from the check
point on, the bot's process tree, the other bots of the game and the host are sampled
(``referee.shell.cputime``), and again when the wait ends, late. The figures go to the
pure judgement of ``referee.core.fairness``.

:func:`watched_receive` waits for a message under the wall basis: a wait that reaches
its deadline with the bot starved is extended by the time the bot was kept off the CPU
(``referee.core.fairness.extension_ms``), up to its cap, and the bot is charged the
wait less its extensions.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import trio
from taki_protocol import Message

from referee.core import (
    WaitFigures,
    charged_ms,
    extension_ms,
    may_be_waiting,
    min_extension_ms,
)
from referee.shell.cputime import CpuMeter, CpuSample, HostSample, host_sample

if TYPE_CHECKING:
    from referee.shell.bots import BotConnection

__all__ = ["WALL_CHECK_SHARE", "WaitWatch", "watched_end", "watched_end_late",
           "watched_receive"]

#: Under the wall basis, the share of the deadline after which a wait is watched.
WALL_CHECK_SHARE: Final = 0.5


class WaitWatch:
    """The samples of one wait, from its check point to its end.

    ``meter`` reads the waiting bot's processes (None: a remote bot, whose CPU time
    nobody here can see), ``others`` those of the other bots of the game."""

    __slots__ = ("_armed", "_end", "_host", "_mine", "_others", "meter", "others")

    def __init__(self, meter: CpuMeter | None, others: Sequence[CpuMeter] = ()) -> None:
        self.meter = meter
        self.others = tuple(others)
        #: The bot's processes when the request went out (:meth:`arm`).
        self._armed: CpuSample | None = None
        self._mine: CpuSample | None = None
        self._others: list[CpuSample] = []
        self._host: HostSample | None = None
        #: The samples that ended the window (:meth:`finish`): the next one begins there.
        self._end: tuple[HostSample, CpuSample | None, list[CpuSample]] | None = None

    def renewed(self) -> WaitWatch:
        """A watch of the same processes over the next window of the wait, which begins
        where this one ended (no time between the two goes unwatched)."""
        watch = WaitWatch(self.meter, self.others)
        watch._armed = self._armed
        if self._end is None:
            watch.begin()
        else:
            watch._host, watch._mine, watch._others = self._end
        return watch

    @property
    def begun(self) -> bool:
        return self._host is not None

    def watched_s(self) -> float:
        """How long the wait has been watched, in seconds."""
        return 0.0 if self._host is None else time.monotonic() - self._host.at

    def arm(self) -> None:
        """Read the bot's CPU time and waits for a CPU as its request goes out (a few
        reads of ``/proc``), so that the figures cover the whole wait since then."""
        self._armed = None if self.meter is None else self.meter.tree_sample()

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
        now = wait_cpu = wait_delay = sampled = None
        if self.meter is not None and self._mine is not None:
            now = self.meter.sample()
            cpu = now.since(self._mine)
            delay = now.run_delay_since(self._mine)
            runnable = self._mine.runnable and now.runnable
            lowered = self._mine.lowered or now.lowered
            if self._armed is not None:
                wait_cpu = round(now.since(self._armed), 1)
                wait_delay = now.run_delay_since(self._armed)
                sampled = round((now.at - self._armed.at) * 1000, 1)
        others_now = [m.quick() for m in self.others]
        others = sum(n.since(s) for n, s in zip(others_now, self._others, strict=True))
        self._end = (host, now, others_now)
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
            wait_cpu_ms=wait_cpu,
            wait_run_delay_ms=None if wait_delay is None else round(wait_delay, 1),
            wait_sampled_ms=sampled,
            runnable_at_end=now is not None and now.runnable,
            load_per_cpu=host.load_per_cpu,
            cpu_pressure=host.pressure_since(self._host),
        )


async def watched_end(
    conn: BotConnection, watch: WaitWatch | None, start: float, deadline: float,
    answered: bool = False, read_late: bool = False,
) -> None:
    """Keep the figures of a wait that ended late in ``conn.last_wait``: by its timer,
    or ``read_late``, by an answer read after the deadline. The final samples scan
    ``/proc`` (milliseconds on a busy host): they are taken in a thread, so that the
    other games' clocks do not wait for them."""
    if watch is None:
        return
    now = trio.current_time()
    waiting = answered or conn.codec.buffered or conn.process.readable_now()
    host = host_sample()  # here: the referee's own wait for a CPU is this thread's
    conn.last_wait = await trio.to_thread.run_sync(
        watch.finish, (now - start) * 1000, max(0.0, (now - deadline) * 1000), waiting,
        host, read_late)


async def watched_end_late(
    conn: BotConnection, watch: WaitWatch | None, start: float, deadline: float,
    span_s: float,
) -> None:
    """The figures of a wait that ended without an answer. A referee that ran late
    may have reached the check point only just before the deadline: it then watches
    the bot a while longer (up to WALL_CHECK_SHARE of ``span_s`` in all), since
    figures over a moment tell nothing; the bot is late anyway."""
    if watch is None:
        return
    waiting = conn.codec.buffered or conn.process.readable_now()
    short_s = span_s * WALL_CHECK_SHARE - watch.watched_s()
    if short_s > 0 and not waiting:
        await trio.sleep(short_s)
    await watched_end(conn, watch, start, deadline, answered=waiting)


async def watched_receive(
    conn: BotConnection, start: float, span_ms: float, grace_ms: int,
    watch: WaitWatch | None, cap_ms: float,
) -> tuple[Message, float]:
    """The bot's next message, sent within ``span_ms`` of ``start`` (Trio's clock),
    and the time it is charged for, in milliseconds: from ``start`` to the message's
    arrival, less the extensions of its deadline (``referee.core.fairness.charged_ms``).

    ``watch`` (None: the wait is not judged; else armed before the request went out)
    begins at WALL_CHECK_SHARE of the span. At the deadline the bot's deadline moves on
    by the time it was kept off the CPU since the request
    (``referee.core.fairness.extension_ms``), and while that lies ahead it is watched
    again, up to ``cap_ms`` after ``start``; an answer read after its deadline is
    judged the same way. Raises :class:`trio.TooSlowError` once the deadline passed:
    ``conn.last_wait`` then holds the last window's figures when the deadline reached
    the cap (for the caller to judge), and None otherwise (the bot had its time); an
    answer still late once the machine's share is taken off is left without figures,
    too, unless its deadline reached the cap."""
    span_s = span_ms / 1000
    deadline = start + span_s
    if watch is None:
        reply = await conn.receive(deadline=deadline)
        return reply, (trio.current_time() - start) * 1000
    try:
        reply = await conn.receive(deadline=start + span_s * WALL_CHECK_SHARE)
        return reply, (trio.current_time() - start) * 1000
    except trio.TooSlowError:
        watch.begin()
    cap = start + max(cap_ms, span_ms) / 1000
    pad_s = span_s  # only the first window is padded to a useful length
    step_s = min_extension_ms(span_ms) / 1000
    # The deadline is the request's time, its span, and what the bot was kept off the
    # CPU since (``credited``, by the latest judgement that found more). The next check
    # comes at the deadline, but never sooner than a step from now, so that a window is
    # long enough to judge (an answer in between is judged as read late).
    credited = 0.0
    check = deadline
    while True:
        try:
            reply = await conn.receive(deadline=check)
        except trio.TooSlowError:
            waiting = await _waiting_message(conn, step_s)
            if waiting is None:
                await watched_end_late(conn, watch, start, check, pad_s)
                credited = max(credited, _credit_s(conn, grace_ms))
                deadline = min(start + span_s + credited, cap)
                # Judged as of its samples: the referee's time since is not the bot's.
                expired = deadline <= _sampled_at(conn, start)
                if expired and (check >= cap or not _may_wait(conn)):
                    if deadline < cap:
                        conn.last_wait = None  # it had its time: its own timeout
                    raise
                conn.last_wait = None
                # (a bot that may be waiting for a CPU is checked again a step later)
                check = min(max(deadline, trio.current_time() + step_s), cap)
                watch, pad_s = watch.renewed(), 0.0
                continue
            reply = waiting
        arrived = trio.current_time()
        if arrived > deadline:
            await watched_end(conn, watch, start, deadline, answered=True, read_late=True)
            credited = _credit_s(conn, grace_ms)  # exact, once the bot has answered
            extended = start + span_s + credited
            deadline = min(extended, cap)
            if arrived <= deadline or extended < cap:
                # In time once the machine's share is taken off; or late even so: its
                # own doing (only a wait that reached its cap is left to judge).
                conn.last_wait = None
        extended_ms = (deadline - start - span_s) * 1000
        return reply, charged_ms((arrived - start) * 1000, extended_ms)


async def _waiting_message(conn: BotConnection, within_s: float) -> Message | None:
    """The message that waits for a referee whose timer ran late (read within
    ``within_s``: a message in the middle of arriving), or None when none waits. It is
    judged as an answer read late: when it came is not known, and the referee's
    lateness counts for at most its own wait for a CPU."""
    if not (conn.codec.buffered or conn.process.readable_now()):
        return None
    try:
        return await conn.receive(deadline=trio.current_time() + within_s)
    except trio.TooSlowError:
        return None


def _sampled_at(conn: BotConnection, start: float) -> float:
    """When the last window's figures were measured (Trio's clock)."""
    figures = conn.last_wait
    if figures is None:
        return trio.current_time()
    return start + (figures.wait_sampled_ms or figures.wait_ms) / 1000


def _may_wait(conn: BotConnection) -> bool:
    figures = conn.last_wait
    return figures is not None and may_be_waiting(figures)


def _credit_s(conn: BotConnection, grace_ms: int) -> float:
    """The time off the CPU the last window's figures credit the bot, in seconds."""
    figures = conn.last_wait
    return 0.0 if figures is None else extension_ms(figures, grace_ms) / 1000
