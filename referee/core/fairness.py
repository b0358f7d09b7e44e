"""Whose fault a timeout was: the bot's, or the machine's (an infrastructure fault).

This module is pure arithmetic on figures the I/O layer measured over a timed wait
(``referee.shell.cputime``): how long the wait was watched, the CPU time the bot's
processes used meanwhile, how long they waited for a CPU while runnable, the CPU time
the other bots of the game used, and how late the referee itself ran.

A timeout is an **infrastructure fault** when

* the bot was **starved**: its processes used less than :data:`STARVED_CPU_SHARE` of a
  CPU over the watched part of the wait while they were runnable (running or waiting
  for a CPU): at least :data:`RUNNABLE_SHARE` of it by the kernel's count, or at both
  ends of it on a host whose CPUs were in demand (some task waited for a CPU at least
  :data:`BUSY_PRESSURE` of the time, or, where the kernel does not tell, the load per
  CPU was above 1); or its answer came late by less than its processes waited for a
  CPU over the window (without those waits it was in time); or
* the **referee was late**: it ran more than its margin (:func:`late_margin_ms`) after
  the deadline or after the bot's answer could be read, and the answer was waiting;

and the starvation did not come from the game itself: the other bots of the game used
less than :data:`OTHERS_CPU_SHARE` of a CPU meanwhile, and all the game's bots together
at most :data:`GAME_CPU_SHARE` CPUs. CPU that a bot's own processes burn, children
included, is the bot's: a bot that forks busy loops is never starved by them, and
never makes another seat's timeout void, and a bot whose processes wanted more than
:data:`GAME_CPU_SHARE` CPUs (their CPU time and wait for a CPU together) crowded
itself (over the whole wait: the kernel counts a wait when it ends). A bot that lowered
its own priority (its nice value, or its session's autogroup) chose to yield: it is
never starved either. A bot that sleeps, or waits on anything but a CPU, is not
runnable, hence never starved: its timeout is its own.

A starved wait is **extended** rather than ended (:func:`extension_ms`). The deadline of
a wait is its request's time plus its allowance plus the time the bot was kept off the
CPU since the request, as the last judgement found it: while the bot is judged starved
over the watched window, all the time its processes did not run since the request (the
wait less their CPU time); otherwise, unless the timeout is the bot's or the game's own
doing (below), the time they waited for a CPU (by the kernel's count: since the request
where it was read then, else over the watched window). A wait whose deadline so moved
lies ahead is watched and judged again (at least :func:`min_extension_ms` later; a bot
that may be waiting for a CPU as a window ends is watched a step longer,
:func:`may_be_waiting`), up to a cap (:data:`STARVED_WAIT_CAP` times the allowance by
default). An answer read after its deadline is judged on the same waits for a CPU (every
one of them ended, and is counted, once it answered), plus the referee's lateness the
figures hold. The rules of the wait itself (when to look, what to charge, the
referee's own lateness) are ``referee.core.waiting``'s.
The bot is charged the wait less its extensions (:func:`charged_ms`): the time it could
think. A bot whose deadline so moved has passed anyway had its time: its timeout is its
own; only a wait that reaches the cap with the bot still starved is an infrastructure
fault. Every test that keeps a bot from buying a void keeps it from buying an extension:
a bot that sleeps, or lowered its priority, or crowds itself with its own processes, or
whose game's other bots took the CPUs, gets none.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final

import attrs

from referee.core.clock import CPU_STARVED_CAP

__all__ = [
    "BUSY_PRESSURE",
    "GAME_CPU_SHARE",
    "MIN_EXTENSION_MS",
    "MIN_EXTENSION_SHARE",
    "OTHERS_CPU_SHARE",
    "RUNNABLE_SHARE",
    "STARVED_CPU_SHARE",
    "STARVED_WAIT_CAP",
    "Blame",
    "InfraEvent",
    "WaitFigures",
    "charged_ms",
    "extension_ms",
    "game_doing",
    "judge",
    "kept_off_ms",
    "late_margin_ms",
    "may_be_waiting",
    "min_extension_ms",
    "startup_credit_ms",
]

#: The share of the time some task waited for a CPU on a host whose CPUs were in demand.
BUSY_PRESSURE: Final = 0.5
#: A bot whose processes used less than this share of one CPU over the wait got too
#: little of the machine to be blamed...
STARVED_CPU_SHARE: Final = 0.5
#: ...when they were runnable (on a CPU or waiting for one) at least this share of it.
RUNNABLE_SHARE: Final = 0.5
#: The other bots of the game used at least this share of one CPU while the seat
#: waited: the starvation came from the game, not from the machine.
OTHERS_CPU_SHARE: Final = 0.5
#: All the bots of the game together used more than this many CPUs over the wait.
GAME_CPU_SHARE: Final = 1.25
#: The smallest margin of the referee's own lateness, in milliseconds.
MIN_LATE_MARGIN_MS: Final = 10.0
#: A starved wait is extended up to this many times its deadline (as long as the CPU
#: basis waits for a starved bot, ``referee.core.clock.CPU_STARVED_CAP``); past that a
#: starved bot's timeout voids the game.
STARVED_WAIT_CAP: Final = CPU_STARVED_CAP
#: The shortest window of an extended wait, as a share of the deadline, and in
#: milliseconds: a wait is judged again at most about
#: ``STARVED_WAIT_CAP / MIN_EXTENSION_SHARE`` times.
MIN_EXTENSION_SHARE: Final = 0.25
MIN_EXTENSION_MS: Final = 5.0


def late_margin_ms(grace_ms: int) -> float:
    """How late the referee may run before its lateness, not the bot, decides."""
    return max(MIN_LATE_MARGIN_MS, float(grace_ms))


class Blame(StrEnum):
    """Whose fault a timeout was."""

    #: The bot's: it forfeits (or takes a strike).
    BOT = "bot"
    #: The bot was starved of CPU by the machine: the game is voided.
    STARVED = "starved"
    #: The referee ran late while the bot's answer waited: the game is voided.
    REFEREE_LATE = "referee_late"


def _ms(value: float) -> float:
    return round(float(value), 1)


@attrs.frozen
class WaitFigures:
    """What was measured over the watched part of one timed wait, in milliseconds."""

    #: How long the wait was watched (the window the other figures cover).
    window_ms: float = attrs.field(converter=_ms)
    #: The whole wait, from the request to the verdict.
    wait_ms: float = attrs.field(converter=_ms)
    #: CPU time of the bot's processes (its whole tree) over the window; None when it
    #: cannot be measured (a remote bot).
    cpu_ms: float | None = attrs.field(default=None)
    #: How long the bot's threads waited for a CPU while runnable, over the window (the
    #: kernel counts a wait when it ends: a thread that never ran shows none).
    run_delay_ms: float | None = attrs.field(default=None)
    #: Whether a thread of the bot was runnable (on a CPU or waiting for one) both when
    #: the window began and when it ended.
    runnable: bool = False
    #: Whether the bot lowered its own priority (its nice value, or its session's).
    lowered_priority: bool = False
    #: CPU time of the other bots of the game over the window.
    others_cpu_ms: float = attrs.field(default=0.0, converter=_ms)
    #: How late the referee ran: after the deadline when it expired, or how long its
    #: own thread waited for a CPU over the window, whichever is more.
    referee_late_ms: float = attrs.field(default=0.0, converter=_ms)
    #: Whether the bot's answer (or its first bytes) waited when the referee gave up.
    answer_waiting: bool = False
    #: For an answer read after its deadline: how late (None: no answer came).
    answer_late_ms: float | None = None
    #: The CPU time of the bot's processes, and their waits for a CPU, over the whole
    #: wait since the request (None: not measured), and how long that was by the
    #: samples' own clock (the last one may be taken a little after the wait ended).
    wait_cpu_ms: float | None = None
    wait_run_delay_ms: float | None = None
    wait_sampled_ms: float | None = None
    #: Whether a thread of the bot was runnable when the window ended.
    runnable_at_end: bool = False
    #: The host's load over one minute per CPU, and the share of the window some task
    #: waited for a CPU (``/proc/pressure/cpu``), when the host tells.
    load_per_cpu: float | None = None
    cpu_pressure: float | None = None

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WaitFigures:
        return cls(**data)

    def describe(self) -> str:
        """One line: ``waited 1200 ms; over 600 ms the bot used 40 ms of CPU ...``."""
        parts = [f"waited {self.wait_ms:.0f} ms"]
        if self.cpu_ms is not None:
            parts.append(f"over {self.window_ms:.0f} ms its processes used"
                         f" {self.cpu_ms:.0f} ms of CPU")
        if self.run_delay_ms is not None:
            parts.append(f"waited {self.run_delay_ms:.0f} ms for a CPU")
        if self.runnable:
            parts.append("was runnable")
        parts.append(f"the other bots used {self.others_cpu_ms:.0f} ms")
        parts.append(f"the referee ran {self.referee_late_ms:.0f} ms late")
        if self.load_per_cpu is not None:
            parts.append(f"load {self.load_per_cpu:.1f} per CPU")
        return "; ".join(parts)


def _others_took_the_cpus(figures: WaitFigures) -> bool:
    """The game's other bots used at least :data:`OTHERS_CPU_SHARE` of a CPU over the
    window, or all its bots together more than :data:`GAME_CPU_SHARE` CPUs."""
    window, others = figures.window_ms, figures.others_cpu_ms
    return (others >= OTHERS_CPU_SHARE * window
            or (figures.cpu_ms or 0.0) + others > GAME_CPU_SHARE * window)


def _crowded_itself(figures: WaitFigures) -> bool:
    """The bot's processes wanted more than :data:`GAME_CPU_SHARE` CPUs (their CPU time
    and waits for a CPU). The kernel counts a wait for a CPU when it ends, so the waits
    counted over the window began after the request, not necessarily in the window: one
    thread's CPU time and waits add up to at most the whole wait."""
    wanted = (figures.cpu_ms or 0.0) + (figures.run_delay_ms or 0.0)
    return wanted > GAME_CPU_SHARE * max(figures.window_ms, figures.wait_ms)


def game_doing(figures: WaitFigures) -> bool:
    """Whether the game itself kept the bot (or the referee) from the CPU: the bot
    lowered its priority or crowded itself with its own processes, or the game's other
    bots took the CPUs. Such a wait buys neither a void nor an extension."""
    return (figures.lowered_priority or _others_took_the_cpus(figures)
            or _crowded_itself(figures))


def judge(figures: WaitFigures, grace_ms: int) -> Blame:
    """Whose fault the timeout measured by ``figures`` was (see the module docstring)."""
    window = figures.window_ms
    if window <= 0 or _others_took_the_cpus(figures):
        return Blame.BOT
    if figures.answer_waiting and figures.referee_late_ms > late_margin_ms(grace_ms):
        return Blame.REFEREE_LATE
    own, delay = figures.cpu_ms, figures.run_delay_ms
    if own is None or delay is None or game_doing(figures):
        return Blame.BOT
    late = figures.answer_late_ms
    if late is not None and delay > late:
        return Blame.STARVED  # without its waits for a CPU, the answer was in time
    if own >= STARVED_CPU_SHARE * window:
        return Blame.BOT
    if own + delay >= RUNNABLE_SHARE * window:
        return Blame.STARVED
    if figures.runnable and _host_busy(figures):
        return Blame.STARVED
    return Blame.BOT


def extension_ms(figures: WaitFigures, grace_ms: int) -> float:
    """How long the bot was kept off the CPU since its request, by the figures of the
    last window of its wait: its deadline moves on by that much (see the module
    docstring). For an answer read late, its waits for a CPU and the referee's own
    lateness. 0 when the timeout is the bot's or the game's own doing: a bot that
    buys no void buys no extension."""
    own, delay = figures.cpu_ms, figures.run_delay_ms
    if own is None or delay is None or game_doing(figures):
        return 0.0
    cpu = figures.wait_cpu_ms
    credit = delay if figures.wait_run_delay_ms is None else figures.wait_run_delay_ms
    if figures.answer_late_ms is not None:
        # The bot answered: every wait of its for a CPU has ended and is counted, and
        # its time off the CPU since includes the time after it answered, not its own.
        return round(credit + figures.referee_late_ms, 1)
    if judge(figures, grace_ms) is Blame.STARVED:
        off = figures.window_ms - own
        if cpu is not None:
            off = (figures.wait_sampled_ms or figures.wait_ms) - cpu
        credit = max(credit, off)
    return round(max(0.0, credit), 1)


def may_be_waiting(figures: WaitFigures) -> bool:
    """Whether the bot may be waiting for a CPU as the window ends (a thread of it was
    runnable, and its wait is not its own doing): the kernel counts a wait only when it
    ends, so the bot is watched a while longer rather than found out of time."""
    return figures.runnable_at_end and figures.cpu_ms is not None and not game_doing(figures)


def min_extension_ms(deadline_ms: float) -> float:
    """The shortest window of an extended wait with ``deadline_ms``: its next check
    comes no sooner, though its deadline may (an answer in between is read late)."""
    return max(MIN_EXTENSION_SHARE * deadline_ms, MIN_EXTENSION_MS)


def startup_credit_ms(figures: WaitFigures) -> float:
    """How long a starting bot was kept off the CPU over a window of its handshake: its
    threads' waits for a CPU, at most the window itself (the time some thread of it
    waited; a virtual machine's start runs many threads, which wait at once). None for
    a bot that lowered its own priority (it chose to yield); the game's rules of
    crowding do not apply to a start (no game plays yet, and the CPU time it uses is
    charged instead: ``referee.core.waiting``)."""
    return kept_off_ms(figures.run_delay_ms, figures.window_ms, figures.lowered_priority,
                       cpu_ms=figures.cpu_ms or 0.0, runnable=figures.runnable_at_end)


def kept_off_ms(run_delay_ms: float | None, window_ms: float, lowered: bool, *,
                cpu_ms: float = 0.0, runnable: bool = False) -> float:
    """How long the machine kept a process tree off the CPU over a window: its threads'
    waits for a CPU (``run_delay_ms``, None: unknown), at most the window (threads that
    wait at once overlap); none when it lowered its own priority (``lowered``). A tree
    that waited for a CPU at least :data:`RUNNABLE_SHARE` of the window and still waits
    as it ends (``runnable``: the kernel counts a wait when it ends) was starved: all the
    window it did not run (less its CPU time ``cpu_ms``) is the machine's."""
    if lowered or run_delay_ms is None:
        return 0.0
    kept = run_delay_ms
    if runnable and run_delay_ms >= RUNNABLE_SHARE * window_ms:
        kept = max(kept, window_ms - cpu_ms)
    return round(max(0.0, min(kept, window_ms)), 1)


def charged_ms(elapsed_ms: float, extended_ms: float) -> float:
    """The time a bot is charged for a wait of ``elapsed_ms`` whose deadline was
    extended by ``extended_ms`` in all: the time it could think."""
    return max(0.0, elapsed_ms - extended_ms)


def _host_busy(figures: WaitFigures) -> bool:
    if figures.cpu_pressure is not None:
        return figures.cpu_pressure >= BUSY_PRESSURE
    return figures.load_per_cpu is not None and figures.load_per_cpu > 1


@attrs.frozen
class InfraEvent:
    """A timeout that was the machine's fault: the game was voided (and played again)."""

    game_id: str
    #: Which play of the game it happened in (0: the first).
    attempt: int
    seat: int
    bot: str
    blame: Blame = attrs.field(converter=Blame)
    #: The timeout as the bot would have been told it.
    detail: str
    figures: WaitFigures

    def to_json(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "attempt": self.attempt, "seat": self.seat,
                "bot": self.bot, "blame": str(self.blame), "detail": self.detail,
                "figures": self.figures.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> InfraEvent:
        fields = dict(data)
        fields["figures"] = WaitFigures.from_json(fields["figures"])
        return cls(**fields)

    def describe(self) -> str:
        why = "starved of CPU" if self.blame is Blame.STARVED else "the referee ran late"
        return f"{self.game_id}: {self.bot} (seat {self.seat}) timed out, {why}: " + (
            self.figures.describe())
