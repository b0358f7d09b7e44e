"""The season's pairwise results read from its aggregates, for rating a million games
without reading one: ``season_pairs`` is the crosstable that the Bradley-Terry fit
needs (:func:`referee.ratings.rate_pair_counts`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from referee.competition.aggregates import Season, SeasonError
from referee.core import TimeSummary
from referee.league import explain
from referee.ratings import PairCounts

__all__ = ["season_forfeits", "season_pair_counts", "season_time_use"]

T = TypeVar("T")


def season_pair_counts(path: Path) -> PairCounts | None:
    """The pairwise counts of every stored game of the database at ``path`` from its
    season aggregates, or None when it keeps none, they are behind its games (the mark
    short of the last game), or a game belongs to a series (rated as one game, not
    pair by pair). Opens the database read-only; raises
    :class:`~referee.competition.SeasonError` (one line) when it cannot be read."""
    def read(db: sqlite3.Connection) -> PairCounts | None:
        if db.execute("SELECT 1 FROM games WHERE game_id LIKE '%series%/game%'"
                      " LIMIT 1").fetchone():
            return None
        bots = sorted(db.execute("SELECT bot, games FROM season_bots WHERE games > 0"))
        index = {bot: k for k, (bot, _) in enumerate(bots)}
        rows = sorted((index[bot], index[other], w, d, lost) for bot, other, w, d, lost
                      in db.execute("SELECT bot, other, wins, draws, losses"
                                    " FROM season_pairs WHERE bot < other"))
        return PairCounts(tuple(b for b, _ in bots), tuple(g for _, g in bots),
                          tuple(r[0] for r in rows), tuple(r[1] for r in rows),
                          tuple(r[2] for r in rows), tuple(r[3] for r in rows),
                          tuple(r[4] for r in rows))

    return _current(path, read)


def season_time_use(path: Path) -> dict[str, TimeSummary] | None:
    """Every bot's time use from the season's figures (what
    :meth:`~referee.league.ResultStore.time_use` reads from every answer), or None when
    a bot's figures are behind its games (the next fold makes them again) or the
    aggregates are behind the games."""
    def read(db: sqlite3.Connection) -> dict[str, TimeSummary] | None:
        rows = db.execute(
            "SELECT b.bot, b.games, b.near_misses, f.games, f.decisions, f.total, f.top,"
            " f.p95 FROM season_bots b LEFT JOIN season_time_figures f ON f.bot = b.bot"
            " WHERE b.games > 0").fetchall()
        if any(r[1] != r[3] for r in rows):
            return None
        return {bot: TimeSummary(decisions, total, p95, top, near)
                for bot, _, near, _, decisions, total, top, p95 in rows}

    return _current(path, read)


def season_forfeits(path: Path) -> dict[str, dict[str, int]] | None:
    """Every bot's forfeits by reason from the season (what
    :meth:`~referee.league.ResultStore.forfeit_counts` counts over every seat), or
    None when the aggregates are behind the games."""
    def read(db: sqlite3.Connection) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for bot, reason, count in db.execute("SELECT bot, reason, count FROM season_forfeits"
                                             " WHERE count > 0"):
            out.setdefault(bot, {})[reason] = count
        return out

    return _current(path, read)


def _current(path: Path, read: Callable[[sqlite3.Connection], T | None]) -> T | None:
    """``read(db)`` on the season of the database at ``path``, or None when it keeps no
    aggregates or they are behind its games (the mark short of the last game). Opens the
    database read-only; raises :class:`~referee.competition.SeasonError` (one line) when
    it cannot be read."""
    with Season(path, readonly=True) as season:
        if not season.has_tables():
            return None
        db = season.connection
        try:
            last = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM games").fetchone()[0]
            if season.mark() != last:
                return None
            return read(db)
        except sqlite3.DatabaseError as exc:
            raise SeasonError(f"cannot read the season of {path}: {explain(exc)}") from None
