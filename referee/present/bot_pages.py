"""A page per bot in a league report: its rating, its versions, its forfeits by reason,
its time use and its games."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from urllib.parse import quote

from referee.config import VERSION_MARK
from referee.core import TimeSummary, TimeUse
from referee.league import GameRecord
from referee.present.report_tables import forfeit_table, games_table, time_table
from referee.ratings import RatingReport


def page_name(bot: str) -> str:
    """The file of a bot's page, in the report's folder of bot pages."""
    return f"{bot}.html"


def page_links(bots: Sequence[str], folder: str) -> dict[str, str]:
    """Each bot's page, as a link from the report."""
    return {bot: f"{quote(folder)}/{quote(page_name(bot))}" for bot in bots}


def versions_of(bot: str, bots: Sequence[str]) -> list[str]:
    """The entrants of the same name (``greedy``, ``greedy@1``, ``greedy@2``), ``bot``
    included, in order."""
    base = bot.partition(VERSION_MARK)[0]
    return [b for b in bots if b.partition(VERSION_MARK)[0] == base]


def versions_by_name(bots: Sequence[str]) -> dict[str, list[str]]:
    """Each bot's versions (:func:`versions_of`), for every bot at once."""
    groups: dict[str, list[str]] = {}
    for bot in bots:
        groups.setdefault(bot.partition(VERSION_MARK)[0], []).append(bot)
    return {bot: groups[bot.partition(VERSION_MARK)[0]] for bot in bots}


def bot_page_body(
    bot: str,
    *,
    ratings: RatingReport | None,
    games: Sequence[GameRecord],
    forfeits: dict[str, dict[str, int]],
    times: Mapping[str, TimeUse | TimeSummary],
    retired: frozenset[str],
    bots: Sequence[str],
    db: Path,
    out_dir: Path,
    back: str,
    played: int | None = None,
) -> str:
    """The body of ``bot``'s page; links are relative to ``out_dir``. ``played``: the
    bot's games, when ``games`` are only the last of them."""
    line = "not rated yet"
    rating = None if ratings is None else next(
        (b for b in ratings.bots if b.name == bot), None)
    if rating is not None and ratings is not None:
        rank = ratings.bots.index(rating) + 1
        ci = "" if rating.ci95 is None else (
            f" (95% {rating.ci95[0]:.0f} .. {rating.ci95[1]:.0f})")
        line = (f"rank {rank} of {len(ratings.bots)}, Elo {rating.elo:.0f}{ci},"
                f" {rating.games} rated games, score {rating.score:.3f}")
    if bot in retired:
        line += "; retired (no longer in the league file)"
    versions = versions_of(bot, bots)
    version_list = ", ".join(
        escape(v) if v == bot else f'<a href="{quote(page_name(v))}">{escape(v)}</a>'
        for v in versions)
    own = [g for g in games if any(s.bot == bot for s in g.seats)]
    count = f"{len(own)}" if played is None or played == len(own) else (
        f"the last {len(own):,} of {played:,}")
    return (
        f'<section><p><a href="{back}">&larr; the league report</a></p>'
        f'<p id="rating">{escape(line)}</p>'
        + (f'<p id="versions">versions: {version_list}</p>' if len(versions) > 1 else "")
        + "</section>"
        f"<section><h2>Forfeits by reason</h2>"
        f"{forfeit_table({bot: forfeits[bot]} if bot in forfeits else {}, [bot])}</section>"
        f"<section><h2>Time use</h2>{time_table({bot: times[bot]} if bot in times else {}, [bot])}"
        "</section>"
        f"<section><h2>Games ({count})</h2>{games_table(own, db, out_dir)}</section>"
    )
