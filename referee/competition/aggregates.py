"""The season's aggregates: what the pages and the ladder need of the stored games, per
bot, kept in tables of the competition's database beside the games.

A season of a million games cannot be read again at every start, nor held game by game
in memory. So the games are *folded*, in the order they were stored, into per-bot rows:

* ``season_bots``: its games, its online rating (the Elo, uncertainty and rated games of
  ``referee.ratings.online``, over the games in stored order), its points and pairs (the
  pairwise score), near misses, answers, and the stored game that last changed it;
* ``season_forfeits``: its forfeits by reason;
* ``season_times``: how many of its answers took each time (the times are kept to 0.1
  ms, so a percentile stays exact and the rows are bounded by the distinct times);
  ``season_time_figures``: their count, total, longest and 95th percentile (nearest
  rank), as of the bot's ``games`` (a row behind its bot's games is made again by the
  next fold);
* ``season_pairs``: its wins, draws and losses against each other bot, seat by seat of
  shared games (the crosstable);
* ``season_bot_games``: one row per bot and game (its seat, the table's size, its place,
  its forfeit, its Elo after the game): a bot's games listed page by page, and its
  rating over time, by the index, without reading the games.

``season_mark`` holds the number (``games.rowid``) of the last game folded. Each fold is
one transaction that reads the mark, folds the games after it, writes the rows and
moves the mark: a process killed at any moment (even with SIGKILL) leaves the
aggregates exactly those of the games up to the mark, and the next fold goes on from
there. Two processes may fold the same database: the transactions take turns, and
each folds only what the other has not.

The methods block (SQLite): call them in a thread.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import attrs

from referee.core import series_of
from referee.league import (
    BUSY_TIMEOUT_MS,
    Meeting,
    ResultStore,
    StoreError,
    Transaction,
    explain,
)
from referee.ratings import Belief, OnlineRatings

__all__ = ["BATCH", "SCHEMA", "Folded", "Season", "SeasonError"]

#: Games folded in one transaction.
BATCH: Final = 5000

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS season_mark (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    game INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS season_bots (
    bot TEXT PRIMARY KEY,
    games INTEGER NOT NULL,
    rated INTEGER NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    points REAL NOT NULL,
    pairs INTEGER NOT NULL,
    near_misses INTEGER NOT NULL,
    last_game INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS season_forfeits (
    bot TEXT NOT NULL,
    reason TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (bot, reason)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS season_times (
    bot TEXT NOT NULL,
    ms REAL NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (bot, ms)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS season_time_figures (
    bot TEXT PRIMARY KEY,
    games INTEGER NOT NULL,
    decisions INTEGER NOT NULL,
    total REAL NOT NULL,
    top REAL,
    p95 REAL
);
CREATE TABLE IF NOT EXISTS season_pairs (
    bot TEXT NOT NULL,
    other TEXT NOT NULL,
    wins INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    PRIMARY KEY (bot, other)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS season_bot_games (
    bot TEXT NOT NULL,
    game INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    size INTEGER NOT NULL,
    place INTEGER NOT NULL,
    forfeit TEXT,
    elo REAL,
    PRIMARY KEY (bot, game)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS meetings_by_bots ON meetings(bots, first_deal);
CREATE INDEX IF NOT EXISTS meetings_open ON meetings(finished) WHERE finished = 0;
"""

_UPSERT_BOT: Final = (
    "INSERT INTO season_bots(bot, games, rated, mu, sigma, points, pairs, near_misses,"
    " last_game) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(bot) DO UPDATE SET"
    " games = excluded.games, rated = excluded.rated, mu = excluded.mu,"
    " sigma = excluded.sigma, points = excluded.points, pairs = excluded.pairs,"
    " near_misses = excluded.near_misses, last_game = excluded.last_game")


class SeasonError(StoreError):
    """The season's aggregates cannot be read or written (the database's problem, in
    one line)."""


@attrs.frozen
class Folded:
    """What one call of :meth:`Season.fold` folded: the games, and the forfeits among
    their seats, and the number of the last game folded (the mark)."""

    games: int
    forfeits: int
    mark: int


@attrs.define
class _Bot:
    """A bot's row of ``season_bots`` while a batch is folded."""

    games: int = 0
    points: float = 0.0
    pairs: int = 0
    near_misses: int = 0
    last_game: int = 0


@attrs.define
class _Batch:
    """The rows one batch of games adds to."""

    bots: dict[str, _Bot]
    forfeits: Counter[tuple[str, str]] = attrs.Factory(Counter)
    times: Counter[tuple[str, float]] = attrs.Factory(Counter)
    pairs: dict[tuple[str, str], list[int]] = attrs.Factory(
        lambda: defaultdict(lambda: [0, 0, 0]))
    games: list[tuple[str, int, int, int, int, str | None, float | None]] = attrs.Factory(list)
    forfeit_seats: int = 0


@attrs.frozen
class _Seat:
    seat: int
    bot: str
    place: int
    forfeit: str | None
    times: tuple[float, ...]
    near_misses: int


class Season:
    """The aggregates of the competition database at ``path`` (their tables are made
    when missing; with ``readonly`` nothing is written, and a database without them
    reads as empty)."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._lock = threading.RLock()
        self._figures_checked = False
        try:
            if readonly:
                uri = f"{self.path.resolve().as_uri()}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, isolation_level=None,
                                           check_same_thread=False)
            else:
                ResultStore(self.path).close()  # creates and marks a results database
                self._db = sqlite3.connect(self.path, isolation_level=None,
                                           check_same_thread=False)
            self._db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
            if not readonly:
                with Transaction(self._db):
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._db.execute("INSERT OR IGNORE INTO season_mark(id, game) VALUES (1, 0)")
        except sqlite3.DatabaseError as exc:
            raise SeasonError(f"cannot open the season of {self.path}: {explain(exc)}"
                              ) from None

    @property
    def connection(self) -> sqlite3.Connection:
        """The connection (for the readers of the aggregates; one thread at a time,
        with :attr:`lock` held)."""
        return self._db

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Season:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def has_tables(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                                    " AND name = 'season_mark'").fetchone() is not None

    def mark(self) -> int:
        """The number of the last game folded (0: none)."""
        with self._lock:
            if not self.has_tables():
                return 0
            row = self._db.execute("SELECT game FROM season_mark WHERE id = 1").fetchone()
        return 0 if row is None else int(row[0])

    def beliefs(self) -> dict[str, Belief]:
        """Every rated bot's online rating, as of the mark."""
        with self._lock:
            if not self.has_tables():
                return {}
            rows = self._db.execute(
                "SELECT bot, mu, sigma, rated FROM season_bots WHERE rated > 0").fetchall()
        return {bot: Belief(mu, sigma, rated) for bot, mu, sigma, rated in rows}

    # -------------------------------------------------------------- meetings

    def meeting_sizes(self) -> Counter[int]:
        """How many meetings the ladder chose of each table size."""
        with self._lock:
            rows = self._db.execute("SELECT json_array_length(bots), COUNT(*) FROM meetings"
                                    " GROUP BY 1").fetchall()
        return Counter({int(size): int(n) for size, n in rows})

    def open_meetings(self) -> list[Meeting]:
        """The ladder's meetings not played to their end, in the order it chose them."""
        with self._lock:
            rows = self._db.execute(
                "SELECT name, bots, first_deal, deals, finished FROM meetings"
                " WHERE finished = 0 ORDER BY rowid").fetchall()
        return [Meeting(name, tuple(json.loads(bots)), first, deals, bool(finished))
                for name, bots, first, deals, finished in rows]

    def next_deal(self, table: Sequence[str]) -> int:
        """The first deal that no meeting of ``table`` (its bots in table order) has."""
        with self._lock:
            row = self._db.execute("SELECT MAX(first_deal + deals) FROM meetings"
                                   " WHERE bots = ?", (json.dumps(list(table)),)).fetchone()
        return 0 if row[0] is None else int(row[0])

    # ---------------------------------------------------------------- folding

    def fold(self, limit: int | None = None) -> Folded:
        """Fold the games stored after the mark, at most ``limit`` of them (None: all),
        one transaction per :data:`BATCH`."""
        total = forfeits = 0
        mark = self.mark()
        try:
            while limit is None or total < limit:
                step = BATCH if limit is None else min(BATCH, limit - total)
                with self._lock, Transaction(self._db):
                    games, seats, mark = self._fold_batch(step)
                total += games
                forfeits += seats
                if games < step:
                    break
            if total or not self._figures_checked:  # after a kill, the first fold mends
                with self._lock, Transaction(self._db):
                    self._time_figures()
                self._figures_checked = True
        except sqlite3.DatabaseError as exc:
            if type(exc) not in (sqlite3.OperationalError, sqlite3.DatabaseError):
                raise
            raise SeasonError(f"cannot fold the games of {self.path}: {explain(exc)}"
                              ) from None
        return Folded(total, forfeits, mark)

    def _time_figures(self) -> None:
        """Make the time figures of every bot whose figures are behind its games (the
        bots of the games just folded, or of a fold killed before its figures)."""
        db = self._db
        behind = db.execute(
            "SELECT b.bot, b.games FROM season_bots b LEFT JOIN season_time_figures f"
            " ON f.bot = b.bot WHERE f.games IS NOT b.games").fetchall()
        rows = []
        for bot, games in behind:
            times = db.execute("SELECT ms, count FROM season_times WHERE bot = ? ORDER BY ms",
                               (bot,)).fetchall()
            decisions = sum(n for _, n in times)
            total = sum(ms * n for ms, n in times)
            rank, seen, p95 = -(-95 * decisions // 100), 0, None
            for ms, n in times:
                seen += n
                if seen >= rank:
                    p95 = ms
                    break
            rows.append((bot, games, decisions, total, times[-1][0] if times else None, p95))
        db.executemany("INSERT OR REPLACE INTO season_time_figures(bot, games, decisions,"
                       " total, top, p95) VALUES (?, ?, ?, ?, ?, ?)", rows)

    def _fold_batch(self, limit: int) -> tuple[int, int, int]:
        db = self._db
        mark = int(db.execute("SELECT game FROM season_mark WHERE id = 1").fetchone()[0])
        games = db.execute("SELECT rowid, game_id FROM games WHERE rowid > ? ORDER BY rowid"
                           " LIMIT ?", (mark, limit)).fetchall()
        if not games:
            return 0, 0, mark
        first, last = games[0][0], games[-1][0]
        by_game: dict[int, list[_Seat]] = defaultdict(list)
        for number, seat, bot, place, reason, times, near in db.execute(
            "SELECT g.rowid, s.seat, s.bot, s.place, s.forfeit_reason, t.times_ms,"
            " t.near_misses FROM games g JOIN seats s ON s.game_id = g.game_id"
            " LEFT JOIN seat_times t ON t.game_id = s.game_id AND t.seat = s.seat"
            " WHERE g.rowid BETWEEN ? AND ? ORDER BY g.rowid, s.seat", (first, last)):
            by_game[number].append(_Seat(seat, bot, place, reason,
                                         tuple(json.loads(times)) if times else (),
                                         near or 0))
        names = {s.bot for seats in by_game.values() for s in seats}
        batch, ratings = self._load(names)
        for number, game_id in games:
            _fold_game(batch, ratings, number, series_of(game_id) is None,
                       by_game.get(number, []))
        self._write(batch, ratings)
        db.execute("UPDATE season_mark SET game = ? WHERE id = 1", (last,))
        return len(games), batch.forfeit_seats, last

    def _load(self, names: Iterable[str]) -> tuple[_Batch, OnlineRatings]:
        wanted = sorted(names)
        bots: dict[str, _Bot] = {}
        beliefs: dict[str, Belief] = {}
        for chunk in _chunks(wanted, 500):
            marks = ",".join("?" * len(chunk))
            for bot, games, rated, mu, sigma, points, pairs, near, last in self._db.execute(
                    "SELECT bot, games, rated, mu, sigma, points, pairs, near_misses,"
                    f" last_game FROM season_bots WHERE bot IN ({marks})", chunk):
                bots[bot] = _Bot(games, points, pairs, near, last)
                if rated:
                    beliefs[bot] = Belief(mu, sigma, rated)
        for name in wanted:
            bots.setdefault(name, _Bot())
        return _Batch(bots), OnlineRatings(beliefs=beliefs)

    def _write(self, batch: _Batch, ratings: OnlineRatings) -> None:
        db = self._db
        rows = []
        for bot, row in batch.bots.items():
            belief = ratings.belief(bot)
            rows.append((bot, row.games, belief.games, belief.mu, belief.sigma, row.points,
                         row.pairs, row.near_misses, row.last_game))
        db.executemany(_UPSERT_BOT, rows)
        db.executemany(
            "INSERT INTO season_forfeits(bot, reason, count) VALUES (?, ?, ?)"
            " ON CONFLICT(bot, reason) DO UPDATE SET count = count + excluded.count",
            [(bot, reason, n) for (bot, reason), n in batch.forfeits.items()])
        db.executemany(
            "INSERT INTO season_times(bot, ms, count) VALUES (?, ?, ?)"
            " ON CONFLICT(bot, ms) DO UPDATE SET count = count + excluded.count",
            [(bot, ms, n) for (bot, ms), n in batch.times.items()])
        db.executemany(
            "INSERT INTO season_pairs(bot, other, wins, draws, losses) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(bot, other) DO UPDATE SET wins = wins + excluded.wins,"
            " draws = draws + excluded.draws, losses = losses + excluded.losses",
            [(bot, other, w, d, lost) for (bot, other), (w, d, lost) in batch.pairs.items()])
        db.executemany(
            "INSERT OR REPLACE INTO season_bot_games(bot, game, seat, size, place, forfeit,"
            " elo) VALUES (?, ?, ?, ?, ?, ?, ?)", batch.games)


def _chunks(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _fold_game(batch: _Batch, ratings: OnlineRatings, number: int, rated: bool,
               seats: Sequence[_Seat]) -> None:
    """Add one game to the batch's rows (its seats in seat order)."""
    places = {s.bot: s.place for s in seats}
    rated = rated and len(places) >= 2
    if rated:
        ratings.update(places)
    size = len(seats)
    for seat in seats:
        row = batch.bots[seat.bot]
        row.games += 1
        row.near_misses += seat.near_misses
        row.last_game = number
        if seat.forfeit is not None:
            batch.forfeits[(seat.bot, seat.forfeit)] += 1
            batch.forfeit_seats += 1
        for ms in seat.times:
            batch.times[(seat.bot, ms)] += 1
        for other in seats:
            if other.bot == seat.bot:
                continue
            row.pairs += 1
            pairing = batch.pairs[(seat.bot, other.bot)]
            if seat.place < other.place:
                pairing[0] += 1
                row.points += 1.0
            elif seat.place == other.place:
                pairing[1] += 1
                row.points += 0.5
            else:
                pairing[2] += 1
        elo = ratings.belief(seat.bot).mu if rated else None
        batch.games.append((seat.bot, number, seat.seat, size, seat.place, seat.forfeit, elo))
