"""One timed wait for a bot's message, as a pure state machine (sans-I/O).

The I/O layer (``referee.shell.waits``) sends a request, then asks the policy what to
do and does it: wait for the bot's message until a time (:class:`Look`), measuring what
the policy asks for if none came by then (:class:`Need`), or measure at once, an answer
being in (:class:`Measure`); and it feeds back what happened (:meth:`WaitPolicy.woke`,
:meth:`WaitPolicy.answered`, :meth:`WaitPolicy.measured`) until the policy gives its
:class:`Verdict`: an answer and the time it is charged, or a timeout with its detail
and, when the machine may be to blame, the figures that
:func:`referee.core.fairness.judge` weighs. Times are the I/O layer's clock (Trio's),
in seconds; nothing here reads a clock, a file or a process.

The rules (PROTOCOL.md, section 9):

* **unwatched** (a bot whose CPU time cannot be read): wall time, one deadline;
* **wall, watched**: the wait is watched from its check point (:data:`WALL_CHECK_SHARE`
  of its span) on; at the deadline the deadline moves on by the time the bot was kept
  off the CPU (:func:`~referee.core.fairness.extension_ms`), and it is judged again
  there (at least :func:`~referee.core.fairness.min_extension_ms` later; a step later
  for a bot that may be waiting for a CPU, :func:`~referee.core.fairness.may_be_waiting`),
  up to ``starved_cap`` times its span; the bot is charged the wait less the
  extensions;
* **start-up** (the handshake of a watched bot): watched from the start; the bot is
  charged the more of the CPU time its processes used and the wait less the time they
  were kept off the CPU (:func:`~referee.core.fairness.startup_credit_ms`, window by
  window), against its startup time; judged at the deadline and again as it moves on
  (a step later for a bot that may be waiting for a CPU), up to ``starved_cap`` times
  its span;
* **CPU**: the bot is charged the CPU time its processes used; it is read whenever it
  could have passed the deadline; a bot that used less than it was told it has is ended
  at ``cpu_wall_cap`` times its span of wall time, unless it is starved there: then it
  is waited for up to :data:`~referee.core.clock.CPU_STARVED_CAP` times its span.

**The referee's lateness is never the bot's**: an answer read after the time the
referee meant to look (a starved referee runs late) is judged as of that time, under
every basis, unless the figures of the wait show that the game's own bots made the
referee late (:func:`~referee.core.fairness.game_doing`).
"""

from __future__ import annotations

import enum
from typing import Final, NamedTuple

import attrs
from taki_protocol import Answer

from referee.core.clock import CPU_STARVED_CAP, CPU_WALL_CAP, MAX_MS, TimeBasis
from referee.core.fairness import (
    Blame,
    WaitFigures,
    charged_ms,
    extension_ms,
    game_doing,
    judge,
    may_be_waiting,
    min_extension_ms,
    startup_credit_ms,
)
from referee.core.faults import BotTimeout

__all__ = ["WALL_CHECK_SHARE", "Look", "Measure", "Need", "Verdict", "WaitPolicy",
           "WaitTimeout"]

#: Under the wall basis, the share of the span after which a wait is watched.
WALL_CHECK_SHARE: Final = 0.5
#: Under the CPU basis, the shortest time to the next reading of the bot's CPU time.
MIN_CPU_CHECK_S: Final = 0.002


class Need(enum.Enum):
    """What the I/O layer measures when a look ends without a message."""

    #: Nothing: the wait is over (the policy says so).
    NOTHING = "nothing"
    #: Begin watching: sample the bot, the game's other bots and the host.
    BEGIN = "begin"
    #: The CPU time the bot's processes used since the request (the CPU basis); the
    #: watch begins at the first such reading.
    USED = "used"
    #: The figures of the watched window (:class:`WaitFigures`); the next window begins
    #: where it ends.
    WINDOW = "window"


# The steps are named tuples: every request makes a look and a verdict, and a tuple is
# made several times faster than a frozen class (benchmarks/ipc.py).


class Look(NamedTuple):
    """Wait for the bot's message until ``until``; if none came, measure ``then``."""

    until: float
    then: Need


class Measure(NamedTuple):
    """The bot's message is in: measure ``then`` now, and feed it to ``measured``."""

    then: Need


class Verdict(NamedTuple):
    """How a wait ended."""

    #: Whether the bot's message came (else: a timeout).
    answered: bool
    #: The time the bot is charged, in ms (wall time less extensions, or CPU time).
    charged_ms: float
    #: A timeout's detail, as the bot is told it ("" for an answer).
    detail: str = ""
    #: The figures to judge whose fault it was, when it may be the machine's (a wait
    #: that reached its cap); None: the bot's own.
    figures: WaitFigures | None = None
    #: The bot's answer, in the verdict of a request it answered (the I/O layer's
    #: ``request()`` sets it); None otherwise.
    answer: Answer | None = None


Step = Look | Measure | Verdict


class WaitTimeout(BotTimeout):
    """A timed wait that ended without the bot's message, with the figures to judge
    whose fault it was when it may be the machine's (:attr:`Verdict.figures`)."""

    def __init__(self, detail: str, figures: WaitFigures | None = None) -> None:
        super().__init__(detail)
        self.figures = figures


class WaitPolicy:
    """The rules of one timed wait (see the module docstring).

    ``start``: when the request went out; ``span_ms``: its deadline, grace included;
    ``told_ms``: the time the bot was told it has; ``watched``: whether the wait is
    watched and judged (the bot's and the game's processes can be sampled);
    ``metered``: whether the bot's CPU time can be read (else the CPU basis falls back
    to wall time); ``basis``: what it is charged; ``starved_cap``: how many
    times its span a starved wall-time wait may last; ``cpu_wall_cap``: the wall time
    after which a CPU-time wait ends, as a multiple of its span; ``startup``: the wait
    is a bot's start (its handshake), judged by the start-up rules when it is watched
    under the wall basis."""

    __slots__ = ("_cap", "_cap_times", "_extended", "begun_at", "cpu", "credited_s", "deadline",
                 "grace_ms", "look", "pending", "span_ms", "span_s", "start", "startup",
                 "starved_cap", "told_ms", "used_ms", "wall_cap", "watched")

    def __init__(self, *, start: float, span_ms: float, told_ms: float, watched: bool,
                 metered: bool | None = None, basis: TimeBasis = TimeBasis.WALL,
                 starved_cap: int = CPU_STARVED_CAP, cpu_wall_cap: int = CPU_WALL_CAP,
                 startup: bool = False) -> None:
        self.wall_cap = cpu_wall_cap
        self.reset(start=start, span_ms=span_ms, told_ms=told_ms, watched=watched,
                   metered=metered, basis=basis, starved_cap=starved_cap, startup=startup)

    def reset(self, *, start: float, span_ms: float, told_ms: float, watched: bool,
              metered: bool | None = None, basis: TimeBasis = TimeBasis.WALL,
              starved_cap: int = CPU_STARVED_CAP, startup: bool = False) -> None:
        """Begin a new wait with these rules (the arguments are the constructor's): one
        policy serves every wait of a bot, one after the other. Every request resets it,
        and most are answered at the first look: what only a longer wait needs (its
        caps, its grace, its credit) is worked out when its first look ends.
        ``startup``: the wait is a bot's start (its handshake), judged by its rules."""
        self.start = start
        self.span_s = span_s = span_ms / 1000
        self.span_ms = span_ms
        self.told_ms = told_ms
        self.watched = watched
        self.startup = startup and watched and basis is TimeBasis.WALL
        self.cpu = cpu = basis is TimeBasis.CPU and (watched if metered is None else metered)
        self.deadline = deadline = start + span_s
        self._cap_times = starved_cap
        self._extended = False
        self.begun_at: float | None = None
        self.pending: float | None = None  # an answer in, awaiting its figures
        if cpu:
            self.look = Look(deadline, Need.USED)
        elif not watched:
            self.look = Look(deadline, Need.NOTHING)
        elif self.startup:  # watched from the start: its processes are all new
            self.look = Look(start, Need.BEGIN)
        else:  # watched from its check point on
            self.look = Look(start + span_s * WALL_CHECK_SHARE, Need.BEGIN)

    @property
    def cap(self) -> float:
        """When the wait ends at the latest (the I/O layer's clock), as things stand."""
        self._extend()
        return self._cap

    def _extend(self) -> None:
        """What a wait needs once its first look ended without an answer."""
        if self._extended:
            return
        self._extended = True
        span_ms, start = self.span_ms, self.start
        self.grace_ms = max(0, round(span_ms - self.told_ms))
        wall_cap = span_ms * (self.wall_cap if self.cpu else self._cap_times)
        self._cap = start + min(max(wall_cap, span_ms), MAX_MS) / 1000
        self.starved_cap = start + min(span_ms * CPU_STARVED_CAP, MAX_MS) / 1000
        self.credited_s = 0.0
        self.used_ms = 0.0

    # ------------------------------------------------------------------ steps

    def first(self) -> Look:
        """What to do once the request went out."""
        return self.look

    def _next(self, look: Look) -> Look:
        self.look = look
        return look

    def answered(self, now: float, used_ms: float | None = None) -> Step:
        """The bot's message was read at ``now`` (and, under the CPU basis, its
        processes had used ``used_ms`` since the request)."""
        if self.cpu:
            if used_ms is None:
                used_ms = self.used_ms if self._extended else 0.0
            return Verdict(True, used_ms)
        # Read late (the referee ran behind its own timer): as of when it meant to look.
        seen = min(now, self.look.until)
        if seen <= self.deadline:
            return self._charged(seen)
        if self.begun_at is None:  # nothing to judge it by
            return self._charged(seen)
        self.pending = seen
        return Measure(Need.WINDOW)

    def _charged(self, seen: float) -> Verdict:
        extended_ms = max(0.0, (self.deadline - self.start - self.span_s) * 1000)
        return Verdict(True, charged_ms((seen - self.start) * 1000, extended_ms))

    def measured(self, now: float, figures: WaitFigures) -> Verdict:
        """The figures of a wait whose answer came after its deadline (:class:`Measure`)."""
        assert self.pending is not None, "measured() without an answer pending"
        self._extend()
        seen = self.pending
        if seen < now and game_doing(figures):
            seen = now  # the game's own bots made the referee late: no benefit of doubt
        late = attrs.evolve(figures, answer_waiting=True,
                            answer_late_ms=round(max(0.0, (seen - self.deadline) * 1000), 1))
        # The windows follow each other: what was credited up to this window, plus this
        # window's waits for a CPU, unless the figures since the request credit more.
        window_s = 0.0 if game_doing(figures) else (figures.run_delay_ms or 0.0) / 1000
        self.credited_s = max(self.credited_s + window_s,
                              extension_ms(late, self.grace_ms) / 1000)
        extended = self.start + self.span_s + self.credited_s
        self.deadline = min(extended, self._cap)
        verdict = self._charged(seen)
        # Late even so: its own doing, unless its deadline reached the cap.
        keep = seen > self.deadline and extended >= self._cap
        return verdict._replace(figures=late if keep else None)

    def woke(self, now: float, *, used_ms: float | None = None,
             figures: WaitFigures | None = None) -> Step:
        """The look ended at ``now`` without a message; ``used_ms`` or ``figures`` are
        what it asked for."""
        self._extend()
        need = self.look.then
        if need is Need.NOTHING:
            return self._timeout(now, None)
        if need is Need.BEGIN:
            # A referee that ran late may reach the check point only just before the
            # deadline: the first window is watched at least WALL_CHECK_SHARE of the
            # span all the same, since figures over a moment tell nothing.
            self.begun_at = now
            until = max(self.deadline, now + self.span_s * WALL_CHECK_SHARE)
            return self._next(Look(until, Need.WINDOW))
        if need is Need.USED:
            assert used_ms is not None, "woke() without the CPU time asked for"
            return self._cpu_reading(now, used_ms)
        assert figures is not None, "woke() without the figures asked for"
        return self._cpu_window(now, figures) if self.cpu else self._wall_window(now, figures)

    # ------------------------------------------------------------- wall time

    def _wall_window(self, now: float, figures: WaitFigures) -> Step:
        if self.startup:
            return self._startup_window(now, figures)
        at_cap = self.look.until >= self._cap
        late_ms = max(0.0, (now - self.look.until) * 1000)
        figures = attrs.evolve(figures, referee_late_ms=late_ms)
        self.credited_s = max(self.credited_s, extension_ms(figures, self.grace_ms) / 1000)
        self.deadline = min(self.start + self.span_s + self.credited_s, self._cap)
        # Judged as of its samples: the referee's time since is not the bot's.
        if self.deadline <= now and (at_cap or not may_be_waiting(figures)):
            return self._timeout(now, figures if self.deadline >= self._cap else None)
        step_s = min_extension_ms(self.span_ms) / 1000
        return self._next(Look(min(max(self.deadline, now + step_s), self._cap), Need.WINDOW))

    def _timeout(self, now: float, figures: WaitFigures | None) -> Verdict:
        detail = f"no answer within {self.told_ms:.0f} ms"
        return Verdict(False, (now - self.start) * 1000, detail, figures)

    # ------------------------------------------------------------- start-up

    def _startup_window(self, now: float, figures: WaitFigures) -> Step:
        self.credited_s += startup_credit_ms(figures) / 1000
        used_ms = figures.wait_cpu_ms or 0.0
        extended = self.start + self.span_s + self.credited_s
        self.deadline = min(extended, self._cap)
        if used_ms > self.span_ms:
            return self._startup_timeout(now, used_ms, None)
        if self.deadline <= now and (now >= self._cap or not figures.runnable_at_end
                                     or figures.lowered_priority):
            # Starved up to the cap: the figures to judge, its threads' waits for a CPU
            # overlapping (at most the window), as its credits count them.
            delay = figures.run_delay_ms
            kept = None if extended < self._cap else attrs.evolve(
                figures, run_delay_ms=None if delay is None else min(delay, figures.window_ms))
            return self._startup_timeout(now, used_ms, kept)
        step_s = min_extension_ms(self.span_ms) / 1000
        return self._next(Look(min(max(self.deadline, now + step_s), self._cap), Need.WINDOW))

    def _startup_timeout(self, now: float, used_ms: float, figures: WaitFigures | None,
                         ) -> Verdict:
        """The timeout of a start, with its allowance: the startup time, of CPU time and
        of wall time less the time the bot was kept off the CPU, within the cap."""
        waited = (now - self.start) * 1000
        off = self.credited_s * 1000
        cap = (self._cap - self.start) * 1000
        detail = (f"no hello within the startup time of {self.told_ms:.0f} ms: waited"
                  f" {waited:.0f} ms, less {off:.0f} ms the machine kept the bot off the CPU"
                  f" (at most {cap:.0f} ms in all); it used {used_ms:.0f} ms of CPU time")
        return Verdict(False, max(used_ms, waited - off), detail, figures)

    # --------------------------------------------------------------- CPU time

    def _cpu_reading(self, now: float, used_ms: float) -> Step:
        self.used_ms = used_ms
        if self.begun_at is None and self.watched:
            self.begun_at = now
        if used_ms > self.span_ms:
            grace = f" + {self.grace_ms} ms grace" if self.grace_ms else ""
            return Verdict(False, used_ms, f"used {used_ms:.0f} ms of CPU time, allowed"
                                           f" {self.told_ms:.0f} ms{grace}")
        if now >= self._cap:
            if used_ms < self.told_ms and self.begun_at is not None:
                # Less CPU than it was told it has: judged.
                pad_s = self.span_s * WALL_CHECK_SHARE - (now - self.begun_at)
                return self._next(Look(now + max(0.0, pad_s), Need.WINDOW))
            return self._cpu_timeout(now, None)
        check = now + max((self.span_ms - used_ms) / 1000, MIN_CPU_CHECK_S)
        return self._next(Look(min(check, self._cap), Need.USED))

    def _cpu_window(self, now: float, figures: WaitFigures) -> Step:
        figures = attrs.evolve(figures, referee_late_ms=0.0)
        if judge(figures, self.grace_ms) is Blame.STARVED and now < self.starved_cap:
            # Runnable but starved, not asleep: its CPU time is what counts, so it is
            # waited for, up to CPU_STARVED_CAP times its span.
            self.begun_at = now
            self._cap = min(now + (self._cap - self.start), self.starved_cap)
            return self._next(Look(now, Need.USED))
        return self._cpu_timeout(now, figures)

    def _cpu_timeout(self, now: float, figures: WaitFigures | None) -> Verdict:
        waited = (now - self.start) * 1000
        grace = f" + {self.grace_ms} ms grace" if self.grace_ms else ""
        return Verdict(False, self.used_ms,
                       f"no answer within {waited:.0f} ms of wall time (the cap: {self.wall_cap}"
                       f" times {self.told_ms:.0f} ms{grace}; it used {self.used_ms:.0f} ms of"
                       " CPU time)", figures)
