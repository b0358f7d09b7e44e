"""The competition's facts of one value each (``competition_meta``: whether submissions
are closed, the ladder paused, the finals' plan, the season's secret and its end), read
and written on a connection the caller holds, inside its transaction."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from referee.competition.errors import CompetitionError
from referee.competition.season import SeasonSecret, new_season
from referee.league import explain

__all__ = ["forget", "keep", "keep_first", "kept_season", "read", "season"]


def read(db: sqlite3.Connection, key: str) -> str | None:
    """The value kept under ``key`` (None: none)."""
    row = db.execute("SELECT value FROM competition_meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def keep(db: sqlite3.Connection, key: str, value: str) -> None:
    """Keep ``value`` under ``key``, in place of any earlier one."""
    db.execute("INSERT OR REPLACE INTO competition_meta(key, value) VALUES (?, ?)",
               (key, value))


def keep_first(db: sqlite3.Connection, key: str, value: str) -> None:
    """Keep ``value`` under ``key`` unless a value is kept there already."""
    db.execute("INSERT OR IGNORE INTO competition_meta(key, value) VALUES (?, ?)",
               (key, value))


def forget(db: sqlite3.Connection, key: str) -> None:
    db.execute("DELETE FROM competition_meta WHERE key = ?", (key,))


def season(db: sqlite3.Connection, seed: int | None) -> SeasonSecret:
    """The season's seed and salt, made now when none is kept (with ``seed``, else the
    seed a ladder of this database already played with, else a fresh one); inside the
    caller's transaction."""
    kept = read(db, "season_seed"), read(db, "season_salt")
    if kept[0] is not None and kept[1] is not None:
        return SeasonSecret(int(kept[0]), kept[1])
    if seed is None:
        row = db.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()
        seed = None if row is None else int(row[0])
    made = new_season(seed)
    keep(db, "season_seed", str(made.seed))
    keep(db, "season_salt", made.salt)
    return made


def kept_season(path: Path) -> SeasonSecret | None:
    """The season kept in the database at ``path``, read only (None: none yet)."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro",
                                                uri=True)) as db:
            seed, salt = read(db, "season_seed"), read(db, "season_salt")
    except sqlite3.Error as exc:
        raise CompetitionError(f"cannot read {path}: {explain(exc)}") from None
    if seed is None or salt is None:
        return None
    return SeasonSecret(int(seed), salt)
