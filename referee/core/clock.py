"""Time controls and per-seat clocks.

This module is pure arithmetic: it never reads a clock. The I/O layer measures
how long a bot took (in milliseconds, as an int or a float) and hands the
number to :meth:`SeatClock.charge` or :meth:`SeatClock.check_reaction`.

Vocabulary
----------
*allowance*
    The time a bot is told it has for the next decision:
    ``min(move_ms, bank left)``, whichever of the two is configured.
*deadline*
    The allowance plus :attr:`TimeControl.grace_ms`. The referee enforces the
    deadline, not the allowance, so that pipe latency and scheduling jitter on
    the referee's side never cost a bot the game. A decision is *late* when it
    took strictly longer than its deadline.
*bank*
    A Fischer time bank: it starts at :attr:`TimeControl.bank_ms`, every
    decision's elapsed time is subtracted from it (never below zero), and
    :attr:`TimeControl.increment_ms` is added after every decision that was
    not late.

Elapsed times are charged to the bank rounded to the nearest millisecond
(halves round up), so the bank is always a whole number of milliseconds and
rounding does not drift in either direction over a long game. Lateness is
judged on the unrounded value.

Time basis
----------
By default (:attr:`TimeBasis.CPU`) the elapsed time of a decision is the CPU time the
bot's processes used (children included), which a crowded machine, or another bot of
the game, does not inflate; a decision then also ends, late, once its wall time passes
:data:`CPU_WALL_CAP` times its deadline, so that a bot that sleeps or waits on I/O still
times out. With :attr:`TimeBasis.WALL` it is wall time (and so it is, whatever the
basis, for a bot whose CPU time cannot be read, such as a remote one).

A +3 Breaker reaction has its own fixed allowance
(:attr:`TimeControl.reaction_ms`) that is never charged to the bank.

Every limit is at most :data:`MAX_MS` (2147483647 ms, about 24.8 days), the largest
number of milliseconds the protocol carries, and the bank never grows beyond it.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any, Final

import attrs
from taki_protocol import MAX_INT32

from referee.core.defaults import DEFAULT_TIME_BASIS

__all__ = [
    "CPU_STARVED_CAP",
    "CPU_WALL_CAP",
    "DEFAULT_GRACE_MS",
    "MAX_MS",
    "Charge",
    "SeatClock",
    "TimeBasis",
    "TimeControl",
]

MAX_MS = MAX_INT32
"""The largest time limit, in milliseconds: what the protocol's time fields carry."""

DEFAULT_GRACE_MS = 5
"""Default slack on every hard deadline, in milliseconds.

Five milliseconds cover a pipe round trip and the referee's own scheduling with
two matches running at once on a two-core machine, while keeping the limit
sharp: a bot that answers 10 ms after its limit is always late, and one that
answers 20 ms before it never is (``benchmarks/time_precision.py`` measures
both). A machine loaded well beyond its cores delays processes by more than
that; give such runs a larger ``grace_ms``.
"""


class TimeBasis(StrEnum):
    """What a bot's time is measured in."""

    #: Wall time, from the request to the answer.
    WALL = "wall"
    #: The CPU time the bot's processes used, with a wall-time cap (:data:`CPU_WALL_CAP`).
    CPU = "cpu"


CPU_WALL_CAP: Final = 10
"""Under the CPU basis, a decision is late once its wall time passes this many times
its deadline, however little CPU it used: a bot that sleeps still times out."""

CPU_STARVED_CAP: Final = 100
"""Under the CPU basis, a bot found starved at the wall-time cap (runnable, but given
little CPU: ``referee.core.fairness``) is waited for up to this many times its deadline
of wall time, since its CPU time, not the clock, is what it is charged; past that the
timeout is the machine's fault and voids the game."""


def _check_int(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        bound = "positive" if minimum == 1 else f"at least {minimum}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    if value > MAX_MS:
        raise ValueError(
            f"{name} must be at most {MAX_MS} (about 24.8 days: the protocol's largest"
            f" time), got {value}"
        )


def _positive(_instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    _check_int(attribute.name, value, minimum=1)


def _optional_positive(_instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        _check_int(attribute.name, value, minimum=1)


def _non_negative(_instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    _check_int(attribute.name, value, minimum=0)


def _check_elapsed(elapsed_ms: float) -> None:
    if type(elapsed_ms) is float and 0.0 <= elapsed_ms < math.inf:
        return  # what the referee measures, once a decision
    if isinstance(elapsed_ms, bool) or not isinstance(elapsed_ms, int | float):
        raise TypeError(f"elapsed_ms must be a number, got {type(elapsed_ms).__name__}")
    if not math.isfinite(elapsed_ms) or elapsed_ms < 0:
        raise ValueError(f"elapsed_ms must be finite and non-negative, got {elapsed_ms}")


def _round_ms(elapsed_ms: float) -> int:
    """Nearest whole millisecond, halves rounding up."""
    return math.floor(elapsed_ms + 0.5)


@attrs.frozen
class TimeControl:
    """How much time a bot gets, all in milliseconds.

    At least one of :attr:`move_ms` and :attr:`bank_ms` must be set. Limits
    that bound a decision (``move_ms``, ``bank_ms``, ``reaction_ms``,
    ``startup_ms``) must be positive; ``increment_ms`` and ``grace_ms`` may be
    zero. An increment only makes sense with a bank. None may exceed
    :data:`MAX_MS`.
    """

    move_ms: int | None = attrs.field(default=1000, validator=_optional_positive)
    """Hard cap on a single decision, or None for no per-decision cap."""

    bank_ms: int | None = attrs.field(default=None, validator=_optional_positive)
    """Initial Fischer time bank, or None for no bank."""

    increment_ms: int = attrs.field(default=0, validator=_non_negative)
    """Added to the bank after each decision that was not late."""

    reaction_ms: int = attrs.field(default=1000, validator=_positive)
    """Allowance for a +3 Breaker reaction; never charged to the bank."""

    startup_ms: int = attrs.field(default=10_000, validator=_positive)
    """Allowance for the handshake, covering interpreter or JIT start-up."""

    grace_ms: int = attrs.field(default=DEFAULT_GRACE_MS, validator=_non_negative)
    """Slack added to every hard deadline (see the module docstring)."""

    time_basis: TimeBasis = attrs.field(default=TimeBasis(DEFAULT_TIME_BASIS),
                                        converter=TimeBasis)
    """What the elapsed times are: the bot's CPU time (the default,
    ``referee.core.defaults.DEFAULT_TIME_BASIS``) or wall time (``time_basis`` in a
    league file's ``[time]``)."""

    def wall_cap_ms(self, deadline_ms: int) -> int:
        """The wall time after which a wait with ``deadline_ms`` ends, late: the
        deadline itself, or :data:`CPU_WALL_CAP` times it under the CPU basis."""
        if self.time_basis is TimeBasis.CPU:
            return min(deadline_ms * CPU_WALL_CAP, MAX_MS)
        return deadline_ms

    def __attrs_post_init__(self) -> None:
        if self.move_ms is None and self.bank_ms is None:
            raise ValueError("a time control needs move_ms, bank_ms or both")
        if self.bank_ms is None and self.increment_ms:
            raise ValueError("increment_ms requires a bank (bank_ms)")

    @property
    def startup_deadline_ms(self) -> int:
        """Hard deadline for the handshake."""
        return self.startup_ms + self.grace_ms

    @property
    def reaction_deadline_ms(self) -> int:
        """Hard deadline for a +3 Breaker reaction."""
        return self.reaction_ms + self.grace_ms

    def describe(self) -> str:
        """Short human-readable summary, e.g. ``60000+100 ms bank, 1000 ms/move`` (and
        the time basis when it is not the default: ``wall time``)."""
        parts: list[str] = []
        if self.bank_ms is not None:
            inc = f"+{self.increment_ms}" if self.increment_ms else ""
            parts.append(f"{self.bank_ms}{inc} ms bank")
        if self.move_ms is not None:
            parts.append(f"{self.move_ms} ms/move")
        if self.time_basis is not TimeBasis(DEFAULT_TIME_BASIS):
            parts.append(f"{self.time_basis} time")
        return ", ".join(parts)


@attrs.frozen
class Charge:
    """The verdict on one timed decision or reaction."""

    elapsed_ms: float
    """How long the bot took, as measured by the caller."""

    allowed_ms: int
    """The allowance the bot had (the deadline is this plus the grace)."""

    deadline_ms: int
    """The hard deadline that was enforced."""

    @property
    def late(self) -> bool:
        """True when the bot took strictly longer than its deadline."""
        return self.elapsed_ms > self.deadline_ms

    def describe(self) -> str:
        """E.g. ``took 1234 ms, allowed 1000 ms + 5 ms grace``; suitable as a timeout
        detail: it names the whole deadline that was applied."""
        grace = self.deadline_ms - self.allowed_ms
        extra = f" + {grace} ms grace" if grace else ""
        return f"took {self.elapsed_ms:.0f} ms, allowed {self.allowed_ms} ms{extra}"


@attrs.define
class SeatClock:
    """The running clock of one seat in one game.

    Mutable but pure: the caller measures elapsed times and reports them.
    """

    control: TimeControl
    _bank_left_ms: int | None = attrs.field(init=False)
    decisions: int = attrs.field(init=False, default=0)
    """Number of decisions charged so far."""
    used_ms: int = attrs.field(init=False, default=0)
    """Total (rounded) time charged so far, including late decisions."""

    def __attrs_post_init__(self) -> None:
        self._bank_left_ms = self.control.bank_ms

    def time_left_ms(self) -> int | None:
        """What remains in the bank, or None when there is no bank."""
        return self._bank_left_ms

    def allowed_ms(self) -> int:
        """The allowance for the next decision: ``min(move_ms, bank left)``."""
        move = self.control.move_ms
        bank = self._bank_left_ms
        if bank is None:
            assert move is not None  # guaranteed by TimeControl validation
            return move
        return bank if move is None else min(move, bank)

    def deadline_ms(self) -> int:
        """The hard deadline for the next decision (allowance plus grace)."""
        return self.allowed_ms() + self.control.grace_ms

    def charge(self, elapsed_ms: float) -> Charge:
        """Charge one decision that took ``elapsed_ms``.

        The (rounded) elapsed time is subtracted from the bank, which never
        goes below zero, and the increment is added unless the decision was
        late. The returned :class:`Charge` says whether it was late; what to do
        about a late decision is the caller's business.
        """
        _check_elapsed(elapsed_ms)
        verdict = Charge(elapsed_ms, self.allowed_ms(), self.deadline_ms())
        spent = _round_ms(elapsed_ms)
        self.decisions += 1
        self.used_ms += spent
        if self._bank_left_ms is not None:
            left = max(0, self._bank_left_ms - spent)
            if not verdict.late:
                left = min(left + self.control.increment_ms, MAX_MS)
            self._bank_left_ms = left
        return verdict

    def reaction_allowed_ms(self) -> int:
        """The allowance for a +3 Breaker reaction."""
        return self.control.reaction_ms

    def reaction_deadline_ms(self) -> int:
        """The hard deadline for a +3 Breaker reaction."""
        return self.control.reaction_deadline_ms

    def check_reaction(self, elapsed_ms: float) -> Charge:
        """Judge a reaction that took ``elapsed_ms``; the bank is untouched."""
        _check_elapsed(elapsed_ms)
        return Charge(elapsed_ms, self.reaction_allowed_ms(), self.reaction_deadline_ms())
