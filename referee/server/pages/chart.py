"""A dated rating chart: each version's Elo over time (from the rating history,
``referee.competition.history``), as SVG coordinates with its axes: dates (UTC) along
the bottom, Elo up the left, each with a few round ticks."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from referee.competition import HistoryPoint

__all__ = ["dated_chart"]

#: The plot's size, and the margins left for the axes' labels (in the SVG's units).
WIDTH: Final = 600
HEIGHT: Final = 180
LEFT: Final = 48
BOTTOM: Final = 34
#: About how many ticks an axis has.
TICKS: Final = 5
#: Time steps a date axis may take (seconds), the finest first.
TIME_STEPS: Final = (60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400,
                     2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400)


def _elo_ticks(low: float, high: float) -> list[float]:
    """Round Elo values across ``low`` .. ``high``: steps of 1, 2 or 5 times a power of
    ten, about TICKS of them."""
    raw = max(high - low, 1.0) / TICKS
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) // step) + 1)]


def _time_ticks(first: float, last: float) -> tuple[list[float], str]:
    """Round moments across ``first`` .. ``last`` (UTC), and the strftime format that
    names them."""
    span = max(last - first, 60.0)
    step = next((s for s in TIME_STEPS if span / s <= TICKS), TIME_STEPS[-1])
    start = float(math.ceil(first / step) * step)
    ticks = [start + i * step for i in range(int((last - start) // step) + 1)]
    label = "%H:%M" if step < 86400 and span < 86400 else (
        "%d %b %H:%M" if step < 86400 else "%d %b")
    return ticks, label


def dated_chart(histories: Mapping[str, Sequence[HistoryPoint]]) -> dict[str, Any] | None:
    """The chart of each bot's history (by bot; a line each), or None when no bot has
    a point."""
    points = [p for h in histories.values() for p in h]
    if not points:
        return None
    first, last = min(p.at for p in points), max(p.at for p in points)
    if last - first < 60.0:  # a single moment: a minute wide around it
        first, last = first - 30.0, last + 30.0
    low, high = min(p.elo for p in points), max(p.elo for p in points)
    pad = max((high - low) * 0.08, 10.0)
    low, high = low - pad, high + pad

    def x(at: float) -> float:
        return LEFT + (at - first) / (last - first) * WIDTH

    def y(elo: float) -> float:
        return HEIGHT - (elo - low) / (high - low) * HEIGHT

    lines = []
    for index, (bot, history) in enumerate(sorted(histories.items())):
        if history:
            coords = " ".join(f"{x(p.at):.1f},{y(p.elo):.1f}" for p in history)
            lines.append({"bot": bot, "points": coords, "color": index % 8,
                          "single": len(history) == 1,
                          "x": x(history[0].at), "y": y(history[0].elo)})
    moments, label = _time_ticks(first, last)
    return {
        "lines": lines, "width": LEFT + WIDTH, "height": HEIGHT + BOTTOM, "left": LEFT,
        "plot_w": WIDTH, "plot_h": HEIGHT,
        "y_ticks": [{"y": round(y(v), 1), "label": f"{v:.0f}"}
                    for v in _elo_ticks(low, high)],
        "x_ticks": [{"x": round(x(t), 1), "label": time.strftime(label, time.gmtime(t))}
                    for t in moments],
        "from": time.strftime("%Y-%m-%d %H:%M", time.gmtime(first)),
        "to": time.strftime("%Y-%m-%d %H:%M", time.gmtime(last)),
    }
