"""The season's figures read from its aggregates, for rating and reporting a million
games without reading one: ``season_pairs`` is the crosstable that the Bradley-Terry fit
needs (:func:`referee.ratings.rate_pair_counts`), ``season_bot_games`` each game's places
(the fit of each prefix of the games), and the bots' rows their forfeits and time use.

Each read is of one state of the season (one read transaction) and only when the
aggregates are those of every stored game (the mark at the last game). A game stored and
not yet folded (the ladder folds right after it stores, the pages when they read) is
waited for a little, then the read gives None and the caller reads the games."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, TypeVar

import attrs
import numpy as np

from referee.competition.aggregates import Season, SeasonError
from referee.core import TimeSummary
from referee.league import explain
from referee.ratings import PairCounts, PairGames

__all__ = ["SeasonRows", "season_forfeits", "season_pair_counts", "season_rows",
           "season_time_use"]

T = TypeVar("T")

#: How long a read waits for the fold of games stored and not folded yet.
FOLD_WAIT_S: Final = 1.0


@attrs.frozen
class SeasonRows:
    """What a report of the season reads of its aggregates, all of one state: the pair
    counts and each game's pairs, the forfeits, the time use (None when a bot's figures
    are behind its games), the games stored, each bot's games (how many) with the
    numbers of its last ones, and the numbers of the last games stored (last first)."""

    counts: PairCounts
    pairs: PairGames
    forfeits: dict[str, dict[str, int]]
    times: dict[str, TimeSummary] | None
    stored: int
    last_games: dict[str, tuple[int, list[int]]]
    recent: list[int]


def season_pair_counts(path: Path) -> PairCounts | None:
    """The pairwise counts of every stored game of the database at ``path`` from its
    season aggregates, or None when it keeps none, they are behind its games (the mark
    short of the last game), or a game belongs to a series (rated as one game, not
    pair by pair). Opens the database read-only; raises
    :class:`~referee.competition.SeasonError` (one line) when it cannot be read."""
    return _current(path, _pair_counts)


def season_time_use(path: Path) -> dict[str, TimeSummary] | None:
    """Every bot's time use from the season's figures (what
    :meth:`~referee.league.ResultStore.time_use` reads from every answer), or None when
    a bot's figures are behind its games (the next fold makes them again) or the
    aggregates are behind the games."""
    return _current(path, _time_use)


def season_forfeits(path: Path) -> dict[str, dict[str, int]] | None:
    """Every bot's forfeits by reason from the season (what
    :meth:`~referee.league.ResultStore.forfeit_counts` counts over every seat), or
    None when the aggregates are behind the games."""
    return _current(path, _forfeits)


def season_rows(path: Path, bot_games: int, recent: int) -> SeasonRows | None:
    """What a report reads of the season (:class:`SeasonRows`): each bot's last
    ``bot_games`` games and the last ``recent`` games stored; None as for
    :func:`season_pair_counts`."""
    def read(db: sqlite3.Connection) -> SeasonRows | None:
        counts = _pair_counts(db)
        pairs = _pair_games(db) if counts is not None else None
        if counts is None or pairs is None:
            return None
        stored = int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        return SeasonRows(counts, pairs, _forfeits(db), _time_use(db), stored,
                          _last_games(db, counts.names, bot_games), _recent_games(db, recent))

    return _current(path, read)


def _pair_counts(db: sqlite3.Connection) -> PairCounts | None:
    if _has_series(db):
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


def _pair_games(db: sqlite3.Connection) -> PairGames | None:
    """Every pair of seats of every stored game, from the season's rows of each bot's
    games (``season_bot_games``), each numbered by its game's place in the order the
    games were stored (1 the first): a prefix of the games is the pairs up to its
    length. None in a league of series."""
    if _has_series(db):
        return None
    names = sorted(bot for (bot,) in db.execute("SELECT bot FROM season_bots"
                                                " WHERE games > 0"))
    index = {bot: k for k, bot in enumerate(names)}
    # Each bot's games and places as two strings of numbers, read by NumPy: a
    # million games' rows are never Python objects.
    numbers = np.sort(_numbers(db.execute("SELECT group_concat(rowid) FROM games"
                                          ).fetchone()[0]))
    columns: list[tuple[np.ndarray, ...]] = []
    for name, games, places in db.execute(
            "SELECT bot, group_concat(game), group_concat(place) FROM season_bot_games"
            " GROUP BY bot"):
        game = _numbers(games)
        columns.append((game, np.full(len(game), index[name], dtype=np.intp),
                        _numbers(places)))
    if not columns:
        return _no_pairs(names)
    game, bot, place = (np.concatenate(c) for c in zip(*columns, strict=True))
    order = np.argsort(game, kind="stable")
    game, bot, place = game[order], bot[order], place[order]
    starts = np.flatnonzero(np.r_[True, game[1:] != game[:-1]])
    sizes = np.diff(np.r_[starts, len(game)])
    parts: list[tuple[np.ndarray, ...]] = []
    for size in np.unique(sizes).tolist():
        first_row = starts[sizes == size]
        for u in range(size):
            for v in range(u + 1, size):
                a, b = bot[first_row + u], bot[first_row + v]
                pa, pb = place[first_row + u], place[first_row + v]
                won = np.where(pa < pb, 1.0, np.where(pa == pb, 0.5, 0.0))
                swap = a > b
                parts.append((game[first_row], np.where(swap, b, a), np.where(swap, a, b),
                              np.where(swap, 1.0 - won, won)))
    if not parts:
        return _no_pairs(names)
    number, first, second, points = (np.concatenate(p) for p in zip(*parts, strict=True))
    order = np.argsort(number, kind="stable")
    return PairGames(tuple(names), np.searchsorted(numbers, number[order]) + 1,
                     first[order], second[order], points[order])


def _numbers(text: str | None) -> np.ndarray:
    """The integers of SQLite's ``group_concat`` (commas between them)."""
    return np.fromstring(text or "", dtype=np.int64, sep=",")


def _no_pairs(names: list[str]) -> PairGames:
    return PairGames(tuple(names), np.zeros(0, np.int64), np.zeros(0, np.intp),
                     np.zeros(0, np.intp), np.zeros(0))


def _last_games(db: sqlite3.Connection, bots: Sequence[str], limit: int
                ) -> dict[str, tuple[int, list[int]]]:
    """Each of ``bots``' games (how many) and the numbers (``games.rowid``) of its last
    ``limit`` games, the last first, by the index of each bot's games."""
    played = dict(db.execute("SELECT bot, games FROM season_bots"))
    return {bot: (int(played.get(bot, 0)), [n for (n,) in db.execute(
        "SELECT game FROM season_bot_games WHERE bot = ? ORDER BY game DESC LIMIT ?",
        (bot, limit))]) for bot in bots}


def _recent_games(db: sqlite3.Connection, limit: int) -> list[int]:
    return [n for (n,) in db.execute("SELECT rowid FROM games ORDER BY rowid DESC"
                                     " LIMIT ?", (limit,))]


def _has_series(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM games WHERE game_id LIKE '%series%/game%'"
                      " LIMIT 1").fetchone() is not None


def _time_use(db: sqlite3.Connection) -> dict[str, TimeSummary] | None:
    rows = db.execute(
        "SELECT b.bot, b.games, b.near_misses, f.games, f.decisions, f.total, f.top,"
        " f.p95 FROM season_bots b LEFT JOIN season_time_figures f ON f.bot = b.bot"
        " WHERE b.games > 0").fetchall()
    if any(r[1] != r[3] for r in rows):
        return None
    return {bot: TimeSummary(decisions, total, p95, top, near)
            for bot, _, near, _, decisions, total, top, p95 in rows}


def _forfeits(db: sqlite3.Connection) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for bot, reason, count in db.execute("SELECT bot, reason, count FROM season_forfeits"
                                         " WHERE count > 0"):
        out.setdefault(bot, {})[reason] = count
    return out


def _current(path: Path, read: Callable[[sqlite3.Connection], T | None]) -> T | None:
    """``read(db)`` on the season of the database at ``path`` in one read transaction,
    or None when it keeps no aggregates or they are behind its games (the mark short of
    the last game) for :data:`FOLD_WAIT_S`. Opens the database read-only; raises
    :class:`~referee.competition.SeasonError` (one line) when it cannot be read."""
    with Season(path, readonly=True) as season:
        if not season.has_tables():
            return None
        db = season.connection
        give_up = time.monotonic() + FOLD_WAIT_S
        try:
            while True:
                db.execute("BEGIN")
                try:
                    last = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM games").fetchone()[0]
                    mark = db.execute("SELECT game FROM season_mark WHERE id = 1").fetchone()
                    if mark is not None and mark[0] == last:
                        return read(db)
                finally:
                    db.execute("COMMIT")
                if time.monotonic() >= give_up:
                    return None
                time.sleep(0.1)
        except sqlite3.DatabaseError as exc:
            raise SeasonError(f"cannot read the season of {path}: {explain(exc)}") from None
