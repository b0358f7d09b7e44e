"""Results in SQLite: every finished game committed on its own, exactly once.

The database runs in WAL mode, so a referee killed at any moment (even with SIGKILL)
loses at most the games that had not been committed yet, and a second run of the same
league skips every game already stored.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    command TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    block TEXT NOT NULL,
    seed INTEGER NOT NULL,
    actions INTEGER NOT NULL,
    reason TEXT,
    replay TEXT,
    finished_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS seats (
    game_id TEXT NOT NULL REFERENCES games(game_id),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    place INTEGER NOT NULL,
    points INTEGER NOT NULL,
    forfeit_reason TEXT,
    forfeit_detail TEXT,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS seats_by_bot ON seats(bot);
"""


class StoreError(Exception):
    """The results database cannot be used (wrong league, unreadable file)."""


@attrs.frozen
class SeatRecord:
    seat: int
    bot: str
    place: int
    points: int
    forfeit_reason: str | None = None
    forfeit_detail: str | None = None


@attrs.frozen
class GameRecord:
    game_id: str
    block: str
    seed: int
    actions: int
    reason: str | None
    seats: tuple[SeatRecord, ...]
    replay: str | None = None


class ResultStore:
    """A league's results database."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open results database {self.path}: {exc}") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ meta

    def bind(self, key: str, value: str) -> None:
        """Record ``key`` = ``value`` on first use; later runs must agree, so results
        of two different leagues never mix in one database."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            self._db.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (key, value))
        elif row[0] != value:
            raise StoreError(
                f"{self.path} holds results for a different {key} "
                f"({_difference(row[0], value)}); use another --db or the original settings"
            )

    def register_bots(self, bots: Sequence[tuple[str, str]]) -> None:
        with self._transaction():
            for name, command in bots:
                self._db.execute(
                    "INSERT INTO bots(name, command) VALUES (?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET command = excluded.command",
                    (name, command),
                )

    # ----------------------------------------------------------------- games

    def finished_ids(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT game_id FROM games")}

    def has_game(self, game_id: str) -> bool:
        return (
            self._db.execute("SELECT 1 FROM games WHERE game_id = ?", (game_id,)).fetchone()
            is not None
        )

    def record(self, game: GameRecord) -> bool:
        """Store a finished game in one transaction; False if it was already stored."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO games(game_id, block, seed, actions, reason, replay) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (game.game_id, game.block, game.seed, game.actions, game.reason, game.replay),
            )
            if cursor.rowcount == 0:
                return False
            self._db.executemany(
                "INSERT INTO seats(game_id, seat, bot, place, points, forfeit_reason, "
                "forfeit_detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (game.game_id, s.seat, s.bot, s.place, s.points, s.forfeit_reason,
                     s.forfeit_detail)
                    for s in game.seats
                ],
            )
        return True

    def games(self) -> Iterator[GameRecord]:
        """Every stored game, in the order they finished."""
        seats: dict[str, list[SeatRecord]] = defaultdict(list)
        for row in self._db.execute(
            "SELECT game_id, seat, bot, place, points, forfeit_reason, forfeit_detail "
            "FROM seats ORDER BY game_id, seat"
        ):
            seats[row[0]].append(SeatRecord(*row[1:]))
        for game_id, block, seed, actions, reason, replay in self._db.execute(
            "SELECT game_id, block, seed, actions, reason, replay FROM games ORDER BY rowid"
        ):
            yield GameRecord(game_id, block, seed, actions, reason, tuple(seats[game_id]), replay)

    def game_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def forfeit_counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(dict)
        for bot, reason, count in self._db.execute(
            "SELECT bot, forfeit_reason, COUNT(*) FROM seats "
            "WHERE forfeit_reason IS NOT NULL GROUP BY bot, forfeit_reason"
        ):
            out[bot][reason] = count
        return dict(out)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


def _difference(stored: str, wanted: str) -> str:
    """What differs between two ``name=value;name=value`` descriptions, e.g.
    ``seed: 5 in the database, 6 now``; the whole values when they have another form."""
    old = [part.partition("=") for part in stored.split(";")]
    new = [part.partition("=") for part in wanted.split(";")]
    if not all(sep for _, sep, _ in old + new):
        return f"{stored!r} in the database, {wanted!r} now"
    before = {name: value for name, _, value in old}
    after = {name: value for name, _, value in new}
    return "; ".join(
        f"{name}: {before.get(name, '(none)')} in the database, {after.get(name, '(none)')} now"
        for name in dict.fromkeys([*before, *after])
        if before.get(name) != after.get(name)
    )


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("COMMIT" if exc_type is None else "ROLLBACK")
