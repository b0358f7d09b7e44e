"""``taki-referee report``: a league's results database as one self-contained HTML page.

The page holds the leaderboard (Elo with 95% bootstrap intervals, drawn as an inline SVG
chart), the ratings over the league (the Elo fit refitted on growing prefixes of the
games in the order they finished), the crosstable, the forfeits by reason and every game
with a link to its replay. It loads nothing: no script, no font, no image from anywhere.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from urllib.parse import quote

import attrs

from referee.core.errors import UsageError
from referee.core.files import write_atomically
from referee.league.store import GameRecord, ResultStore, StoreError, rated_games
from referee.present.render import fill_template
from referee.ratings.elo import GameResult as RatedGame
from referee.ratings.leaderboard import RatingReport, rate

__all__ = [
    "PALETTE",
    "ReportData",
    "load_report",
    "rating_history",
    "render_report",
    "replay_link",
    "write_report",
]

#: Line and dot colors of the bots, in leaderboard order (then again, dashed).
PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1",
    "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#6b6b6b",
)  # fmt: skip


@attrs.frozen
class ReportData:
    """What a report shows, read from a results database."""

    db: Path
    games: tuple[GameRecord, ...]
    ratings: RatingReport | None
    #: Games in each prefix of the rating-over-games chart.
    history_games: tuple[int, ...]
    #: Elo of each bot after each prefix (``None`` before its first game).
    history: dict[str, list[float | None]]
    forfeits: dict[str, dict[str, int]]


def _rated(games: Sequence[GameRecord]) -> list[RatedGame]:
    return [RatedGame(places={s.bot: s.place for s in g.seats}, block=g.block) for g in games]


def rating_history(
    games: Sequence[RatedGame], points: int = 20
) -> tuple[list[int], dict[str, list[float | None]]]:
    """Refit the Elo ratings (the leaderboard's model) on ``points`` growing prefixes of
    ``games`` (evenly spread, the last one all the games). Returns the prefix lengths and,
    per bot, its Elo after each prefix, ``None`` while it has not played yet."""
    if points < 1:
        raise ValueError("points must be at least 1")
    n = len(games)
    sizes = sorted({max(1, round(i * n / points)) for i in range(1, points + 1)}) if n else []
    names = sorted({name for g in games for name in g.places})
    history: dict[str, list[float | None]] = {name: [] for name in names}
    for size in sizes:
        elos = {bot.name: bot.elo for bot in rate(games[:size], resamples=0).bots}
        for name in names:
            history[name].append(elos.get(name))
    return sizes, history


def load_report(db: Path, points: int = 20) -> ReportData:
    """Read a results database and fit the ratings the report shows."""
    with ResultStore(db, readonly=True) as store:
        games = tuple(store.games())
        forfeits = store.forfeit_counts()
        # The same input and fit as ``taki-referee ratings``, so the figures agree.
        leaderboard = rated_games(store)
    report = rate(leaderboard, resamples=200, seed=0) if leaderboard else None
    sizes, history = rating_history(_rated(games), points)
    return ReportData(db, games, report, tuple(sizes), history, forfeits)


# ----------------------------------------------------------------------- helpers


def _color(index: int) -> tuple[str, str]:
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


def _locate(stored: str, db: Path) -> Path:
    """A stored replay path, taken from the current directory if it is there, else
    from the database's directory."""
    path = Path(stored)
    if path.is_absolute():
        return path
    candidates = [Path.cwd() / path, db.resolve().parent / path]
    return next((c for c in candidates if c.exists()), candidates[0])


def _href(path: Path, out_dir: Path) -> str:
    return quote(Path(os.path.relpath(path.resolve(), out_dir.resolve())).as_posix())


def replay_link(replay: str | None, db: Path, out_dir: Path) -> str | None:
    """The href of a stored replay from a page in ``out_dir`` (a relative path), or
    ``None`` for a game without a replay."""
    if not replay:
        return None
    return _href(_locate(replay, db), out_dir)


# ------------------------------------------------------------------------ charts


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
        color, _dash = _color(i)
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
        color, dash = _color(i)
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


# ------------------------------------------------------------------------ tables


def leaderboard_table(report: RatingReport, forfeits: dict[str, dict[str, int]]) -> str:
    rows = []
    for rank, bot in enumerate(report.bots, 1):
        ci = "-" if bot.ci95 is None else f"{bot.ci95[0]:.0f} .. {bot.ci95[1]:.0f}"
        lost = sum(forfeits.get(bot.name, {}).values())
        color, _ = _color(rank - 1)
        rows.append(
            f'<tr data-bot="{escape(bot.name)}"><td class="num">{rank}</td>'
            f'<td><span class="key" style="background:{color}"></span>{escape(bot.name)}</td>'
            f'<td class="num">{bot.elo:.0f}</td><td class="num">{ci}</td>'
            f'<td class="num">{bot.games}</td><td class="num">{bot.score:.3f}</td>'
            f'<td class="num">{lost or "-"}</td></tr>'
        )
    return (
        '<table id="leaderboard"><thead><tr><th>#</th><th>bot</th><th>Elo</th><th>95% CI</th>'
        "<th>games</th><th>score</th><th>forfeits</th></tr></thead><tbody>"
        + "".join(rows) + "</tbody></table>"
    )


def crosstable(report: RatingReport) -> str:
    names = report.names
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    rows = []
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append('<td class="self"></td>')
                continue
            record = report.crosstable.get(a, {}).get(b)
            if record is None:
                cells.append("<td></td>")
                continue
            # Shade from red (0) through white (0.5) to green (1).
            shade = round(abs(record.score - 0.5) * 2 * 45)
            hue = 130 if record.score >= 0.5 else 5
            cells.append(
                f'<td class="num" style="background:hsl({hue} 60% {100 - shade}%)" '
                f'title="wins-draws-losses {record.wins}-{record.draws}-{record.losses}, '
                f'LOS {report.los[a][b]:.0%}">{record.score:.2f}<small> '
                f"{record.wins}-{record.draws}-{record.losses} &middot; LOS "
                f"{report.los[a][b]:.0%}</small></td>"
            )
        rows.append(f'<tr data-bot="{escape(a)}"><th>{escape(a)}</th>{"".join(cells)}</tr>')
    return (
        f'<table id="crosstable"><thead><tr><th></th>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table>'
    )


def forfeit_table(forfeits: dict[str, dict[str, int]], order: Sequence[str]) -> str:
    if not forfeits:
        return '<p class="none" id="forfeits">No forfeits.</p>'
    reasons = sorted({r for counts in forfeits.values() for r in counts})
    head = "".join(f"<th>{escape(r)}</th>" for r in reasons)
    rows = []
    for name in [*order, *sorted(set(forfeits) - set(order))]:
        counts = forfeits.get(name)
        if not counts:
            continue
        cells = "".join(f'<td class="num">{counts.get(r, 0) or ""}</td>' for r in reasons)
        rows.append(
            f'<tr data-bot="{escape(name)}"><td>{escape(name)}</td>{cells}'
            f'<td class="num">{sum(counts.values())}</td></tr>'
        )
    return (
        f'<table id="forfeits"><thead><tr><th>bot</th>{head}<th>total</th></tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table>'
    )


def games_table(games: Sequence[GameRecord], db: Path, out_dir: Path) -> str:
    rows = []
    for number, game in enumerate(games, 1):
        seats = ", ".join(
            f"{escape(s.bot)} <b>{s.place}</b>"
            + (f' <span class="forfeit">({escape(s.forfeit_reason)})</span>'
               if s.forfeit_reason else "")
            for s in sorted(game.seats, key=lambda s: s.seat)
        )
        links = ""
        if game.replay:
            path = _locate(game.replay, db)
            links = f'<a href="{_href(path, out_dir)}">json</a>'
            page = path.with_suffix(".html")
            if page.exists():
                links = f'<a href="{_href(page, out_dir)}">view</a> ' + links
        rows.append(
            f'<tr><td class="num">{number}</td><td>{escape(game.game_id)}</td>'
            f"<td>{escape(game.block)}</td><td>{seats}</td><td>{escape(game.reason or '-')}</td>"
            f'<td class="num">{game.actions}</td><td>{links}</td></tr>'
        )
    return (
        '<table id="games"><thead><tr><th>#</th><th>game</th><th>block</th>'
        "<th>seats (bot, place)</th><th>end</th><th>actions</th><th>replay</th></tr></thead>"
        f'<tbody>{"".join(rows)}</tbody></table>'
    )


# -------------------------------------------------------------------------- page


def render_report(data: ReportData, out_dir: Path) -> str:
    """The report page; replay links are relative to ``out_dir``."""
    title = f"League report: {data.db.name}"
    n = len(data.games)
    summary = f"{n} game{'s' if n != 1 else ''} from {escape(str(data.db))}"
    if data.ratings is None:
        body = '<section><p class="none">No games in the database yet.</p></section>'
    else:
        report = data.ratings
        order = report.names
        body = (
            f"<section><h2>Leaderboard</h2>{leaderboard_table(report, data.forfeits)}"
            f'<p class="note">Bradley-Terry Elo (mean {report.anchor_elo:.0f}), '
            f"95% intervals from {report.resamples} bootstrap resamples of the duplicate "
            f"blocks.</p>{elo_chart(report)}</section>"
            f"<section><h2>Rating over the games</h2>"
            f'<p class="note">The Elo fit refitted after each of {len(data.history_games)} '
            f"growing prefixes of the games, in the order they finished.</p>"
            f"{history_chart(data.history_games, data.history, order)}</section>"
            f"<section><h2>Crosstable</h2>"
            f'<p class="note">Row against column: pairwise score, wins-draws-losses and the '
            f"likelihood of superiority.</p>{crosstable(report)}</section>"
            f"<section><h2>Forfeits by reason</h2>{forfeit_table(data.forfeits, order)}</section>"
            f"<section><h2>Games</h2>{games_table(data.games, data.db, out_dir)}</section>"
        )
    return fill_template("report.html", TITLE=escape(title), SUMMARY=summary, BODY=body)


def write_report(db: Path, target: Path, points: int = 20) -> ReportData:
    data = load_report(db, points)
    page = render_report(data, target.parent)
    write_atomically(target, page, what="report")
    return data


def report_command(args: argparse.Namespace) -> int:
    """``taki-referee report DB [-o OUT] [--points N]``."""
    if not args.db.exists():
        raise UsageError(f"no results database at {args.db}")
    if args.points < 1:
        raise UsageError("--points must be at least 1")
    try:
        write_report(args.db, args.output, args.points)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}") from None
    print(args.output)
    return 0
