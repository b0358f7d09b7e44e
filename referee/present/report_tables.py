"""The report's tables, as HTML: leaderboard, crosstable, forfeits, time use, series and
the games with links to their replays."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from urllib.parse import quote

from referee.core import SeriesResult, TimeSummary, TimeUse
from referee.league import GameRecord
from referee.present.report_charts import bot_color
from referee.ratings import RatingReport


def locate_replay(stored: str, db: Path) -> Path:
    """A stored replay path, taken from the current directory if it is there, else
    from the database's directory."""
    path = Path(stored)
    if path.is_absolute():
        return path
    candidates = [Path.cwd() / path, db.resolve().parent / path]
    return next((c for c in candidates if c.exists()), candidates[0])


def _href(path: Path, out_dir: Path) -> str:
    return quote(Path(os.path.relpath(path.resolve(), out_dir.resolve())).as_posix())


def leaderboard_table(report: RatingReport, forfeits: dict[str, dict[str, int]],
                      retired: frozenset[str] = frozenset(),
                      pages: dict[str, str] | None = None) -> str:
    """The ratings, best first; each name links to its bot's page when ``pages`` has it."""
    rows = []
    pages = pages or {}
    for rank, bot in enumerate(report.bots, 1):
        mark = ' <span class="retired">(retired)</span>' if bot.name in retired else ""
        name = escape(bot.name)
        if bot.name in pages:
            name = f'<a href="{pages[bot.name]}">{name}</a>'
        ci = "-" if bot.ci95 is None else f"{bot.ci95[0]:.0f} .. {bot.ci95[1]:.0f}"
        lost = sum(forfeits.get(bot.name, {}).values())
        color, _ = bot_color(rank - 1)
        rows.append(
            f'<tr data-bot="{escape(bot.name)}"><td class="num">{rank}</td>'
            f'<td><span class="key" style="background:{color}"></span>{name}{mark}</td>'
            f'<td class="num">{bot.elo:.0f}</td><td class="num">{ci}</td>'
            f'<td class="num">{bot.games}</td><td class="num">{bot.score:.3f}</td>'
            f'<td class="num">{lost or "-"}</td></tr>'
        )
    return (
        '<table id="leaderboard"><thead><tr><th>#</th><th>bot</th><th>Elo</th><th>95% CI</th>'
        "<th>games</th><th>score</th><th>forfeits</th></tr></thead><tbody>"
        + "".join(rows) + "</tbody></table>"
    )


def series_table(series: Sequence[SeriesResult]) -> str:
    """Each series of a league of series: the bots by place, with their penalty points."""
    rows = []
    for one in series:
        cells = ", ".join(f"{s.place}. {escape(s.bot)} {s.penalty:+d}" for s in one.standings)
        rows.append(f'<tr><td>{escape(one.name)}</td><td class="num">{len(one.games)}</td>'
                    f"<td>{cells}</td></tr>")
    return (
        '<table id="series"><thead><tr><th>series</th><th>games</th>'
        "<th>standings (penalty points)</th></tr></thead><tbody>"
        + "".join(rows) + "</tbody></table>"
    )


def time_table(times: Mapping[str, TimeUse | TimeSummary], order: Sequence[str]) -> str:
    """Each bot's answer times: decisions, mean, p95 and max in ms, near misses."""
    rows = []
    for name in [*order, *sorted(set(times) - set(order))]:
        use = times.get(name)
        if use is None or not use.decisions:
            continue
        figures = use.to_json()
        rows.append(
            f'<tr data-bot="{escape(name)}"><td>{escape(name)}</td>'
            + "".join(f'<td class="num">{figures[key]}</td>'
                      for key in ("decisions", "mean", "p95", "max", "near_misses"))
            + "</tr>"
        )
    if not rows:
        return '<p class="none" id="time-use">No answer times recorded.</p>'
    return (
        '<table id="time-use"><thead><tr><th>bot</th><th>decisions</th><th>mean ms</th>'
        "<th>p95 ms</th><th>max ms</th><th>near misses</th></tr></thead><tbody>"
        + "".join(rows) + "</tbody></table>"
    )


#: From this many bots on, the crosstable's columns are numbered (with a legend) so that
#: the table fits a page.
NUMBERED_FROM = 7


def crosstable(report: RatingReport, most: int | None = None) -> str:
    """Row against column, the best rated first (at most ``most`` of them)."""
    names = report.names[:most]
    numbered = len(names) >= NUMBERED_FROM
    number = {name: i for i, name in enumerate(names, 1)}
    head = "".join(
        f'<th title="{escape(n)}">{number[n]}</th>' if numbered else f"<th>{escape(n)}</th>"
        for n in names
    )
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
        label = f"{number[a]}. {escape(a)}" if numbered else escape(a)
        rows.append(f'<tr data-bot="{escape(a)}"><th>{label}</th>{"".join(cells)}</tr>')
    legend = ""
    if numbered:
        legend = ('<p class="note" id="crosstable-legend">Columns: ' + ", ".join(
            f"{number[n]} {escape(n)}" for n in names) + ".</p>")
    return (
        f'<table id="crosstable"><thead><tr><th></th>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table>{legend}'
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


#: Games per page of the game list (each page a collapsible part of the report).
GAMES_PER_PAGE = 100


def _schedule_order(game_id: str) -> list[str | int]:
    """Sort key of a game id in schedule order: numbers compare as numbers, so deal 10
    comes after deal 9."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", game_id)]


def games_table(games: Sequence[GameRecord], db: Path, out_dir: Path,
                per_page: int = GAMES_PER_PAGE) -> str:
    """Every game in schedule order (table, deal, rotation), with links to its replay,
    in pages of ``per_page`` games: the first open, the others a click away. A game
    voided every time shows ``voided``, and under every game a play voided by an
    infrastructure fault shows that fault with its figures."""
    ordered = sorted(games, key=lambda g: _schedule_order(g.game_id))
    pages = []
    for start in range(0, len(ordered), per_page):
        chunk = ordered[start:start + per_page]
        rows = "".join(_game_row(start + i, game, db, out_dir)
                       for i, game in enumerate(chunk, 1))
        table = (
            '<table class="games"><thead><tr><th>#</th><th>game</th><th>block</th>'
            "<th>seats (bot, place)</th><th>end</th><th>actions</th><th>replay</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>"
        )
        summary = f"games {start + 1} to {start + len(chunk)} of {len(ordered)}"
        pages.append(f"<details{' open' if not start else ''}><summary>{summary}</summary>"
                     f"{table}</details>")
    return f'<div id="games">{"".join(pages)}</div>'


def _game_row(number: int, game: GameRecord, db: Path, out_dir: Path) -> str:
    seats = ", ".join(
        f"{escape(s.bot)} <b>{s.place}</b>"
        + (f' <span class="forfeit">({escape(s.forfeit_reason)})</span>'
           if s.forfeit_reason else "")
        for s in sorted(game.seats, key=lambda s: s.seat)
    )
    end = escape(game.reason or "-")
    if game.voided:
        seats = '<span class="voided">voided: no result</span>'
        end = '<span class="voided">voided</span>'
    elif game.infra:
        plays = len(game.infra)
        seats += (f' <span class="voided">(played again after {plays} voided'
                  f" play{'s' if plays != 1 else ''})</span>")
    links = ""
    if game.replay:
        path = locate_replay(game.replay, db)
        links = f'<a href="{_href(path, out_dir)}">json</a>'
        page = path.with_suffix(".html")
        if page.exists():
            links = f'<a href="{_href(page, out_dir)}">view</a> ' + links
    faults = "".join(
        f'<tr class="infra"><td></td><td colspan="6"><small>play {e.attempt + 1}:'
        f" {escape(e.describe())}</small></td></tr>" for e in game.infra)
    mark = ' class="voided"' if game.voided else ""
    return (
        f'<tr{mark}><td class="num">{number}</td><td>{escape(game.game_id)}</td>'
        f"<td>{escape(game.block)}</td><td>{seats}</td><td>{end}</td>"
        f'<td class="num">{game.actions}</td><td>{links}</td></tr>{faults}'
    )
