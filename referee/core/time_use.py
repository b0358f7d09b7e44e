"""How much of its time a bot uses: answer times summarised per seat, game and bot.

The referee measures how long every answer took (``referee.shell``); this module only
does the arithmetic on those figures. An answer is a *near miss* when it came within
10% of the time the bot was told it had (its allowance, :mod:`referee.core.clock`):
a bot that answers in 480 ms of 500 is one scheduling hiccup away from a timeout.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

__all__ = ["NEAR_MISS_SHARE", "TimeRecorder", "TimeSummary", "TimeUse", "is_near_miss"]

#: An answer that took at least this share of its allowance is a near miss.
NEAR_MISS_SHARE = 0.9


def is_near_miss(elapsed_ms: float, allowed_ms: float) -> bool:
    """Whether an answer of ``elapsed_ms`` came within 10% of its ``allowed_ms``."""
    return elapsed_ms >= NEAR_MISS_SHARE * allowed_ms


def _rounded(values: Iterable[float]) -> tuple[float, ...]:
    return tuple(round(float(v), 1) for v in values)


@attrs.frozen
class TimeUse:
    """The answer times of one seat in one game, or of a bot over many games.

    Times are in milliseconds with one decimal (the precision the referee measures
    to, and what the results database keeps)."""

    times_ms: tuple[float, ...] = attrs.field(default=(), converter=_rounded)
    near_misses: int = 0

    @property
    def decisions(self) -> int:
        return len(self.times_ms)

    @property
    def mean(self) -> float | None:
        return sum(self.times_ms) / len(self.times_ms) if self.times_ms else None

    @property
    def p95(self) -> float | None:
        """The 95th percentile (nearest rank): 95% of the answers took at most this."""
        if not self.times_ms:
            return None
        ordered = sorted(self.times_ms)
        return ordered[math.ceil(0.95 * len(ordered)) - 1]

    @property
    def max(self) -> float | None:
        return max(self.times_ms) if self.times_ms else None

    @classmethod
    def merge(cls, uses: Iterable[TimeUse]) -> TimeUse:
        """All the answers of several seats or games as one."""
        times: list[float] = []
        near = 0
        for use in uses:
            times.extend(use.times_ms)
            near += use.near_misses
        return cls(tuple(times), near)

    def to_json(self) -> dict[str, Any]:
        """``{"decisions", "mean", "p95", "max", "near_misses"}``, times in ms (null
        without decisions)."""
        mean = self.mean
        return {
            "decisions": self.decisions,
            "mean": None if mean is None else round(mean, 1),
            "p95": self.p95,
            "max": self.max,
            "near_misses": self.near_misses,
        }

    def describe(self) -> str:
        """One line for people: ``"mean 12.3 ms, p95 40.0, max 480.2, 3 near misses"``."""
        if not self.times_ms:
            return "no decisions"
        misses = f", {self.near_misses} near miss{'es' if self.near_misses != 1 else ''}"
        return f"mean {self.mean:.1f} ms, p95 {self.p95:.1f}, max {self.max:.1f}" + (
            misses if self.near_misses else ""
        )


@attrs.frozen
class TimeSummary:
    """A bot's time use as its figures alone, as a season's aggregates keep millions of
    answers: the figures of :class:`TimeUse` of the same answers, without the answers."""

    decisions: int = 0
    total_ms: float = 0.0
    p95: float | None = None
    max: float | None = None
    near_misses: int = 0

    @property
    def mean(self) -> float | None:
        return self.total_ms / self.decisions if self.decisions else None

    def to_json(self) -> dict[str, Any]:
        """What :meth:`TimeUse.to_json` gives of the same answers."""
        mean = self.mean
        return {"decisions": self.decisions, "mean": None if mean is None else round(mean, 1),
                "p95": self.p95, "max": self.max, "near_misses": self.near_misses}


class TimeRecorder:
    """The answer times of every seat of a game, while it is played."""

    def __init__(self, players: int) -> None:
        self._times: list[list[float]] = [[] for _ in range(players)]
        self._near: list[int] = [0] * players

    def record(self, seat: int, elapsed_ms: float, allowed_ms: float) -> None:
        self._times[seat].append(elapsed_ms)
        if is_near_miss(elapsed_ms, allowed_ms):
            self._near[seat] += 1

    def seats(self) -> Sequence[TimeUse]:
        return [TimeUse(tuple(t), n) for t, n in zip(self._times, self._near, strict=True)]
