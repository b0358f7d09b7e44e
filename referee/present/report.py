"""``taki-referee report``: a league's results database as one self-contained HTML page.

The page holds the leaderboard (Elo with 95% bootstrap intervals, drawn as an inline SVG
chart), the ratings over the league (the Elo fit refitted on growing prefixes of the
games in the order they finished), the crosstable, the forfeits by reason and every game
with a link to its replay; the games voided by infrastructure faults are counted in the
header and shown in the game list with each fault's figures. It loads nothing: no
script, no font, no image from anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from referee.competition import Season
from referee.core import ReplayError, write_atomically
from referee.league import GameRecord, ResultStore, rated_games, stored_series
from referee.present.bot_pages import bot_page_body, page_links, page_name, versions_by_name
from referee.present.league_facts import header_lines
from referee.present.render import fill_template, render_replay
from referee.present.report_charts import elo_chart, history_chart
from referee.present.report_data import ReportData, history_sizes, with_faults
from referee.present.report_tables import (
    crosstable,
    forfeit_table,
    games_table,
    leaderboard_table,
    locate_replay,
    series_table,
    time_table,
)
from referee.ratings import RatedGame, RatingReport, model_named, rate

#: The most bots the crosstable shows (the best rated): a thousand bots' would be a
#: million cells.
CROSSTABLE_BOTS = 100

__all__ = [
    "CROSSTABLE_BOTS",
    "ReportData",
    "load_report",
    "rating_history",
    "read_games",
    "render_report",
    "write_report",
]

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
    sizes = history_sizes(len(games), points)
    names = sorted({name for g in games for name in g.places})
    history: dict[str, list[float | None]] = {name: [] for name in names}
    for size in sizes:
        elos = {bot.name: bot.elo for bot in rate(games[:size], resamples=0).bots}
        for name in names:
            history[name].append(elos.get(name))
    return sizes, history


def load_report(db: Path, points: int = 20) -> ReportData:
    """Read a results database and fit the ratings the report shows: a competition's
    season from its aggregates when they are up to date (:mod:`.report_season`),
    else every game."""
    if points < 1:
        raise ValueError("points must be at least 1")
    with Season(db, readonly=True) as kept:
        aggregates = kept.has_tables()
    if not aggregates:  # a league's database: NumPy and the season's readers stay unloaded
        return read_games(db, points)
    from referee.present.report_season import read_season

    season = read_season(db, points)
    return read_games(db, points) if season is None else season


def read_games(db: Path, points: int = 20) -> ReportData:
    """The report of every game of a results database, read game by game."""
    with ResultStore(db, readonly=True) as store:
        events = store.infra_events()
        games = tuple(with_faults(g, events) for g in store.games())
        voided = tuple(store.voided_games())
        forfeits = store.forfeit_counts()
        times = store.time_use()
        retired = frozenset(store.retired())
        series = tuple(stored_series(store))
        rules, time, dates = store.meta("rules"), store.meta("time"), store.game_dates()
        # The same input and fit as ``taki-referee ratings``, so the figures agree.
        leaderboard = rated_games(store)
        model = model_named(store.meta("rating_model"))
    report = rate(leaderboard, resamples=200, seed=0, model=model) if leaderboard else None
    # A league of series is rated by series: its chart grows series by series.
    prefixes = [RatedGame(places=one.places(), block=one.block) for one in series] if series \
        else _rated(games)
    sizes, history = rating_history(prefixes, points)
    return ReportData(db, games, report, tuple(sizes), history, forfeits, times, retired,
                      series, rules, time, dates, voided)


def _voids_note(data: ReportData) -> str:
    """What the game list says of the plays voided by infrastructure faults."""
    if not data.void_plays:
        return ""
    count = len(data.voided)
    return (f'<p class="note">{data.void_plays} play{"s" if data.void_plays != 1 else ""}'
            " voided by infrastructure faults (a bot starved of CPU by the machine, or"
            " the referee running late), each played again; "
            f"{count} game{'s' if count != 1 else ''} voided every time, without a"
            " result.</p>")


def _listed_note(data: ReportData) -> str:
    """What the game list says when it lists a season's last games only."""
    if data.season is None or len(data.games) == data.stored:
        return ""
    return (f'<p class="note">The last {len(data.games):,} of the {data.stored:,} games'
            " stored (each bot's page lists its last games).</p>")


def _crosstable_note(report: RatingReport) -> str:
    if len(report.bots) <= CROSSTABLE_BOTS:
        return ""
    return (f"; the {CROSSTABLE_BOTS} best rated of the {len(report.bots)} bots (each"
            " pair of all of them: <code>taki-referee ratings --json</code>)")


# -------------------------------------------------------------------------- page


def render_report(data: ReportData, out_dir: Path, title: str | None = None,
                  pages: dict[str, str] | None = None) -> str:
    """The report page; replay links are relative to ``out_dir``; ``pages`` links each
    bot's name to its page."""
    title = title or f"League report: {data.db.name}"
    summary = header_lines(data.stored, str(data.db), data.rules, data.time, data.dates,
                           len(data.voided))
    games = (*data.games, *data.voided)
    if data.ratings is None:
        body = '<section><p class="none">No games in the database yet.</p></section>'
        if games:
            body += (f"<section><h2>Games</h2>{_voids_note(data)}"
                     f"{games_table(games, data.db, out_dir)}</section>")
    else:
        report = data.ratings
        order = report.names
        board = leaderboard_table(report, data.forfeits, data.retired, pages)
        body = (
            f"<section><h2>Leaderboard</h2>{board}"
            f'<p class="note">Bradley-Terry Elo (mean {report.anchor_elo:.0f}), '
            f"95% intervals from {report.resamples} bootstrap resamples of "
            f"{data.resampled}.</p>{elo_chart(report)}</section>"
            f"<section><h2>Rating over the games</h2>"
            f'<p class="note">The Elo fit refitted after each of {len(data.history_games)} '
            f"growing prefixes of the games, in the order they finished.</p>"
            f"{history_chart(data.history_games, data.history, order)}</section>"
            f"<section><h2>Crosstable</h2>"
            f'<p class="note">Row against column: pairwise score, wins-draws-losses and the '
            f"likelihood of superiority{_crosstable_note(report)}.</p>"
            f"{crosstable(report, CROSSTABLE_BOTS)}</section>"
            f"<section><h2>Forfeits by reason</h2>{forfeit_table(data.forfeits, order)}</section>"
            f"<section><h2>Time use</h2>"
            f'<p class="note">Each answer\'s time from request to answer; a near miss came'
            f" within 10% of the time the bot had.</p>{time_table(data.times, order)}</section>"
            + (f"<section><h2>Series</h2>"
               f'<p class="note">Each series is rated as one game, by its places: the'
               f" lowest total of penalty points first (RULES.md R24).</p>"
               f"{series_table(data.series)}</section>" if data.series else "")
            + f"<section><h2>Games</h2>{_listed_note(data)}{_voids_note(data)}"
            f"{games_table(games, data.db, out_dir)}</section>"
        )
    return fill_template("report.html", TITLE=escape(title), SUMMARY=summary, BODY=body)


def bots_folder(target: Path) -> Path:
    """Where the pages of the bots of the report ``target`` go: ``report-bots/``."""
    return target.with_name(f"{target.stem}-bots")


def write_report(db: Path, target: Path, points: int = 20, title: str | None = None,
                 data: ReportData | None = None) -> ReportData:
    """Write the report to ``target`` and a page per bot beside it (:func:`bots_folder`),
    of ``data`` when given (read from ``db`` by :func:`load_report`, else now)."""
    data = load_report(db, points) if data is None else data
    folder = bots_folder(target)
    bots = [] if data.ratings is None else list(data.ratings.names)
    pages = page_links(bots, folder.name)
    write_atomically(target, render_report(data, target.parent, title, pages), what="report")
    title = title or f"League report: {db.name}"
    versions = versions_by_name(bots)
    for bot in bots:
        played, own = data.games_of(bot)
        body = bot_page_body(
            bot, ratings=data.ratings, games=own, forfeits=data.forfeits,
            times=data.times, retired=data.retired, bots=versions[bot], db=db,
            out_dir=folder, back=f"../{target.name}", played=played)
        page = fill_template("report.html", TITLE=escape(f"{bot}: {title}"),
                             SUMMARY=header_lines(data.stored, str(db), data.rules,
                                                  data.time, data.dates, len(data.voided)),
                             BODY=body)
        # A thousand bots: a thousand pages, each made again by the next run; the
        # report itself is synced.
        write_atomically(folder / page_name(bot), page, what="report", make_parents=True,
                         sync=False)
    return data


def render_linked_replays(db: Path, games: Sequence[GameRecord]) -> tuple[int, list[str]]:
    """Render the page of every stored replay beside it (``game.json`` to ``game.html``),
    unless a page newer than the replay is there already; the report's game list then
    links each page. Returns how many pages were written and what could not be."""
    written, problems = 0, []
    for game in games:
        if not game.replay:
            continue
        source = locate_replay(game.replay, db)
        target = source.with_suffix(".html")
        try:
            if target.exists() and target.stat().st_mtime >= source.stat().st_mtime:
                continue
            render_replay(source, target)
        except (ReplayError, OSError) as exc:
            problems.append(f"{source}: {exc}")
            continue
        written += 1
    return written, problems
