"""The report's charts: inline SVG, drawn from the ratings (no script, no image)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from referee.ratings import RatingReport

#: Line and dot colors of the bots, in leaderboard order (then again, dashed).
PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1",
    "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#6b6b6b",
)  # fmt: skip


def bot_color(index: int) -> tuple[str, str]:
    """The stroke color and dash pattern of the bot at ``index``."""
    return PALETTE[index % len(PALETTE)], "" if index < len(PALETTE) else "6 3"


def _ticks(low: float, high: float, count: int = 6) -> list[float]:
    """Round tick values covering [low, high]."""
    if high <= low:
        high = low + 1.0
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    out = []
    value = first
    while value <= high + 1e-9:
        out.append(round(value, 6))
        value += step
    return out


def _fmt(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{value:g}"


def elo_chart(report: RatingReport) -> str:
    """Every bot's Elo as a dot with its 95% interval as a bar, best at the top."""
    bots = report.bots
    row, label_w, value_w, plot_w, top = 30, 150, 150, 520, 34
    values = [b.elo for b in bots]
    for b in bots:
        if b.ci95 is not None:
            values += list(b.ci95)
    low, high = min(values), max(values)
    pad = max(10.0, (high - low) * 0.08)
    ticks = _ticks(low - pad, high + pad)
    x0, x1 = min(ticks[0], low - pad), max(ticks[-1], high + pad)
    height = top + row * len(bots) + 10
    width = label_w + plot_w + value_w

    def x(value: float) -> float:
        return label_w + (value - x0) / (x1 - x0) * plot_w

    parts = [
        f'<svg class="chart" id="elo-chart" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="Elo with 95% intervals">'
    ]
    for t in ticks:
        parts.append(
            f'<line class="grid" x1="{x(t):.1f}" y1="{top - 8}" x2="{x(t):.1f}" '
            f'y2="{height - 6}"/><text class="tick" x="{x(t):.1f}" y="{top - 14}" '
            f'text-anchor="middle">{_fmt(t)}</text>'
        )
    for i, bot in enumerate(bots):
        color, _dash = bot_color(i)
        y = top + row * i + row / 2
        name = escape(bot.name)
        ci = "" if bot.ci95 is None else f" [{bot.ci95[0]:.0f}, {bot.ci95[1]:.0f}]"
        parts.append(f'<g class="bot" data-bot="{name}"><title>{name}: {bot.elo:.0f}{ci}</title>')
        parts.append(
            f'<text class="name" x="{label_w - 10}" y="{y + 4:.1f}" text-anchor="end">{name}</text>'
        )
        if bot.ci95 is not None:
            lo, hi = x(bot.ci95[0]), x(bot.ci95[1])
            parts.append(
                f'<line class="ci" x1="{lo:.1f}" y1="{y:.1f}" x2="{hi:.1f}" y2="{y:.1f}" '
                f'stroke="{color}"/>'
                f'<line class="cap" x1="{lo:.1f}" y1="{y - 6:.1f}" x2="{lo:.1f}" y2="{y + 6:.1f}" '
                f'stroke="{color}"/>'
                f'<line class="cap" x1="{hi:.1f}" y1="{y - 6:.1f}" x2="{hi:.1f}" y2="{y + 6:.1f}" '
                f'stroke="{color}"/>'
            )
        parts.append(
            f'<circle class="elo" cx="{x(bot.elo):.1f}" cy="{y:.1f}" r="6" fill="{color}"/>'
            f'<text class="value" x="{label_w + plot_w + 10}" y="{y + 4:.1f}">'
            f"{bot.elo:.0f}{escape(ci)}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def history_chart(sizes: Sequence[int], history: dict[str, list[float | None]],
                  order: Sequence[str]) -> str:
    """One line per bot: its Elo refitted after each prefix of the games."""
    width, height = 820, 340
    left, right, top, bottom = 56, 150, 14, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for series in history.values() for v in series if v is not None]
    if not sizes or not values:
        return '<p class="none">No games yet.</p>'
    pad = max(5.0, (max(values) - min(values)) * 0.05)
    y_ticks = _ticks(min(values) - pad, max(values) + pad, 5)
    y0, y1 = min(y_ticks[0], min(values) - pad), max(y_ticks[-1], max(values) + pad)
    x_max = max(sizes)
    x_ticks = [t for t in _ticks(0, x_max, 8) if t == int(t)]

    def x(games: float) -> float:
        return left + games / x_max * plot_w

    def y(elo: float) -> float:
        return top + (y1 - elo) / (y1 - y0) * plot_h

    parts = [
        f'<svg class="chart" id="history-chart" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="Elo over the games">'
    ]
    for t in y_ticks:
        parts.append(
            f'<line class="grid" x1="{left}" y1="{y(t):.1f}" x2="{left + plot_w}" y2="{y(t):.1f}"/>'
            f'<text class="tick" x="{left - 6}" y="{y(t) + 4:.1f}" '
            f'text-anchor="end">{_fmt(t)}</text>'
        )
    for t in x_ticks:
        parts.append(
            f'<text class="tick" x="{x(t):.1f}" y="{top + plot_h + 16}" '
            f'text-anchor="middle">{_fmt(t)}</text>'
        )
    parts.append(
        f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" '
        f'y2="{top + plot_h}"/><text class="tick" x="{left + plot_w / 2:.1f}" '
        f'y="{height - 6}" text-anchor="middle">games</text>'
    )
    for i, name in enumerate(order):
        color, dash = bot_color(i)
        pts = [(x(n), y(v)) for n, v in zip(sizes, history.get(name, []), strict=False)
               if v is not None]
        if not pts:
            continue
        label = escape(name)
        coords = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<g class="series" data-bot="{label}"><title>{label}</title>'
            f'<polyline points="{coords}" stroke="{color}"{dash_attr}/>'
        )
        parts.extend(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{color}"/>' for px, py in pts
        )
        legend_y = top + 14 + 18 * i
        parts.append(
            f'<line x1="{left + plot_w + 14}" y1="{legend_y - 4}" x2="{left + plot_w + 34}" '
            f'y2="{legend_y - 4}" stroke="{color}" stroke-width="3"{dash_attr}/>'
            f'<text class="legend" x="{left + plot_w + 40}" y="{legend_y}">{label}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
