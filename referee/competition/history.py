"""The ladder's rating history: dated snapshots of every rated bot's live rating, and
of the full fit of all the games when it was made, in a table of the competition's
database. The pages draw a bot's dated chart and each bot's rank change from it; the
server writes a snapshot every few minutes while games land, so the table grows with
time (a row per bot per snapshot), never in memory.

Run as ``python -m referee.competition.history DB`` it prints the full fit of the
games of the results database ``DB`` (no bootstrap; from the season's pair counts when
they are up to date) as JSON, ``{"bot": elo}``: the
server runs it in a process of its own, so a fit of many games never holds the
interpreter the ladder's clocks run in.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs

from referee.competition.season_counts import season_pair_counts
from referee.league import BUSY_TIMEOUT_MS, ResultStore, Transaction, rated_games
from referee.ratings import model_named, pair_elos, rate

__all__ = ["HistoryPoint", "Snapshot", "fitted_elos", "history_of", "latest_fit",
           "ranks_at", "record_snapshot"]

#: The most points of a bot's history a chart draws (evenly thinned beyond).
CHART_POINTS: Final = 400

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS rating_history (
    at REAL NOT NULL,
    bot TEXT NOT NULL,
    elo REAL NOT NULL,
    low REAL NOT NULL,
    high REAL NOT NULL,
    games INTEGER NOT NULL,
    active INTEGER NOT NULL,
    fitted REAL,
    PRIMARY KEY (bot, at)
);
CREATE INDEX IF NOT EXISTS rating_history_by_time ON rating_history(at);
"""


@attrs.frozen
class Snapshot:
    """One bot's rating at a moment: its live Elo with the 95% interval, its rated
    games, whether it played in the ladder then, and its Elo in the full fit of every
    game (None when no fit was made)."""

    bot: str
    elo: float
    low: float
    high: float
    games: int
    active: bool
    fitted: float | None = None


@attrs.frozen
class HistoryPoint:
    """A point of a bot's chart: when (seconds since the epoch), its live Elo, and its
    fitted Elo then (None when no fit was made)."""

    at: float
    elo: float
    fitted: float | None


def _connect(db: Path, *, write: bool) -> sqlite3.Connection:
    if write:
        conn = sqlite3.connect(db, isolation_level=None)
    else:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True,
                               isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
    return conn


def _exists(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                        " AND name = 'rating_history'").fetchone() is not None


def record_snapshot(db: Path, at: float, bots: Sequence[Snapshot]) -> None:
    """Store the ratings of ``bots`` at the moment ``at`` (blocking; one transaction)."""
    conn = _connect(db, write=True)
    try:
        with Transaction(conn):
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.executemany(
                "INSERT OR REPLACE INTO rating_history(at, bot, elo, low, high, games,"
                " active, fitted) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(at, b.bot, b.elo, b.low, b.high, b.games, int(b.active), b.fitted)
                 for b in bots])
    finally:
        conn.close()


def history_of(db: Path, bot: str, points: int = CHART_POINTS) -> list[HistoryPoint]:
    """``bot``'s snapshots, oldest first, at most ``points`` of them (evenly thinned,
    the first and the last kept); blocking."""
    conn = _connect(db, write=False)
    try:
        if not _exists(conn):
            return []
        count = conn.execute("SELECT COUNT(*) FROM rating_history WHERE bot = ?",
                             (bot,)).fetchone()[0]
        step = max(1, -(-count // points))
        rows = conn.execute(
            "SELECT at, elo, fitted FROM (SELECT at, elo, fitted, ROW_NUMBER() OVER"
            " (ORDER BY at) - 1 AS n FROM rating_history WHERE bot = ?)"
            " WHERE n % ? = 0 OR n = ? ORDER BY at", (bot, step, count - 1)).fetchall()
    finally:
        conn.close()
    return [HistoryPoint(at, elo, fitted) for at, elo, fitted in rows]


def ranks_at(db: Path, at: float) -> dict[str, int]:
    """The ranks (1 the best) of the bots that played in the ladder at the last
    snapshot at or before ``at`` (the first snapshot, when all are later; empty when
    there is none); blocking."""
    conn = _connect(db, write=False)
    try:
        if not _exists(conn):
            return {}
        when = conn.execute("SELECT MAX(at) FROM rating_history WHERE at <= ?",
                            (at,)).fetchone()[0]
        if when is None:
            when = conn.execute("SELECT MIN(at) FROM rating_history").fetchone()[0]
        rows = conn.execute("SELECT bot FROM rating_history WHERE at = ? AND active = 1"
                            " ORDER BY elo DESC, bot", (when,)).fetchall()
    finally:
        conn.close()
    return {bot: rank for rank, (bot,) in enumerate(rows, 1)}


def latest_fit(db: Path) -> tuple[float | None, dict[str, float]]:
    """When the last full fit was made, and each bot's Elo in it (None and empty before
    the first); blocking."""
    conn = _connect(db, write=False)
    try:
        if not _exists(conn):
            return None, {}
        when = conn.execute("SELECT MAX(at) FROM rating_history WHERE fitted IS NOT NULL"
                            ).fetchone()[0]
        if when is None:
            return None, {}
        rows = conn.execute("SELECT bot, fitted FROM rating_history WHERE at = ?"
                            " AND fitted IS NOT NULL", (when,)).fetchall()
    finally:
        conn.close()
    return when, dict(rows)


def fitted_elos(db: Path) -> dict[str, float]:
    """The full fit of the stored games (no bootstrap; the mean Elo is 1500), by bot;
    empty before the first game. Blocking. The Bradley-Terry fit is made from the
    season's pair counts when they are up to date (milliseconds of NumPy at a thousand
    bots), as ``taki-referee ratings`` makes it; else, and for Plackett-Luce, from
    every game (heavy for many)."""
    with ResultStore(db, readonly=True) as store:
        model = model_named(store.meta("rating_model"))
    counts = season_pair_counts(db) if model != "plackett-luce" else None
    if counts is not None:
        return pair_elos(counts)
    with ResultStore(db, readonly=True) as store:
        games = rated_games(store)
        if not games:
            return {}
        report = rate(games, resamples=0, model=model)
    return {bot.name: bot.elo for bot in report.bots}


if __name__ == "__main__":
    json.dump(fitted_elos(Path(sys.argv[1])), sys.stdout)
