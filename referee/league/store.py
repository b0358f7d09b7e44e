"""Results in SQLite: every finished game committed on its own, exactly once.

The database runs in WAL mode, so a referee killed at any moment (even with SIGKILL)
loses at most the games that had not been committed yet, and a second run of the same
league skips every game already stored.

A results database is marked with :data:`APPLICATION_ID` (``PRAGMA application_id``).
The store refuses any other non-empty SQLite database before changing anything in it,
so pointing ``--db`` at another program's file never alters that file. A database of an
earlier version of the referee, which set no mark, is recognised by its tables and
columns, and marked the first time it is opened for writing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from referee.core import InfraEvent, TimeUse, UserError
from referee.league.records import GameRecord, Meeting, SeatRecord
from referee.league.schema import FIRST_LAYOUT, SCHEMA, TABLES
from referee.league.sqlite_support import Transaction, agrees, difference, explain

__all__ = [
    "APPLICATION_ID", "FIRST_LAYOUT", "SCHEMA", "SCHEMA_VERSION", "TABLES", "GameRecord",
    "Meeting", "ResultStore", "SeatRecord", "StoreError",
]

#: ``PRAGMA application_id`` of a results database: "TAKI" in ASCII.
APPLICATION_ID = 0x54414B49
#: ``PRAGMA user_version`` of a results database: the layout of its tables. Layout 2
#: adds the table ``seat_times`` and the column ``bots.retired``, layout 3 the table
#: ``meetings`` (a ladder's tables), layout 4 ``voided_games`` and ``infra_events``; an
#: earlier database gains them when a league or a ladder opens it.
SCHEMA_VERSION = 4
#: How long a write waits for another program's lock on the database to go away.
BUSY_TIMEOUT_MS = 5000
class StoreError(UserError):
    """The results database cannot be used (wrong league, unreadable or read-only file,
    locked by another program, not a results database)."""


class ResultStore:
    """A league's results database, created when the file is absent or empty.

    With ``readonly`` the database is only read (``taki-referee ratings`` and
    ``report``): it must exist, and nothing in it is changed, not even its mark. Every
    SQLite error is raised as a :class:`StoreError` that says what went wrong.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        # A league writes from a worker thread (never on the Trio loop, where a lock held
        # by another program would stall every bot's clock), so the connection may be
        # used from any thread, one at a time.
        self._lock = threading.RLock()
        self._claim: BinaryIO | None = None
        with self._errors("cannot open results database"):
            if readonly:
                uri = f"{self.path.resolve().as_uri()}?mode=ro"
                self._db = sqlite3.connect(
                    uri, uri=True, isolation_level=None, check_same_thread=False
                )
            else:
                self._db = sqlite3.connect(
                    self.path, isolation_level=None, check_same_thread=False
                )
            try:
                self._open()
            except BaseException:
                self._db.close()
                raise

    def _open(self) -> None:
        self._db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
        empty = self._recognise()
        if self.readonly:
            if empty:
                raise StoreError(
                    f"cannot open results database {self.path}: it is empty"
                    " (a league creates it)"
                )
            return
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # One write at once, also for an existing database: a read-only file or another
        # program's lock is reported now, before any game is played.
        with self._transaction():
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            if "retired" not in self._columns("bots"):
                self._db.execute(
                    "ALTER TABLE bots ADD COLUMN retired INTEGER NOT NULL DEFAULT 0")
            self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _recognise(self) -> bool:
        """Whether the database is empty; StoreError unless it is empty or a results
        database (marked, or with the tables of an earlier, unmarked version)."""
        app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if app_id == APPLICATION_ID:
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"cannot open results database {self.path}: it was written by a newer"
                    f" version of taki-referee (layout {version}; this version reads up to"
                    f" {SCHEMA_VERSION})"
                )
            return False
        objects = self._db.execute(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
        if app_id == 0 and version == 0 and not objects:
            return True
        tables = sorted(name for kind, name in objects if kind == "table")
        columns = {
            name: tuple(row[1] for row in self._db.execute(f"PRAGMA table_info('{name}')"))
            for name in tables if name in TABLES
        }
        if app_id == 0 and version == 0 and columns == TABLES and len(tables) == len(TABLES):
            return False
        what = f"its tables: {', '.join(tables)}" if tables else "it has no tables"
        raise StoreError(
            f"{self.path} is not a taki-referee results database ({what});"
            " it was left unchanged: give another file"
        )

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Raise an SQLite error that the database or its file causes (read-only,
        locked, damaged, not a database) as a StoreError whose message says ``doing``
        and why. An integrity or programming error is a fault of the referee: raised
        as it is."""
        try:
            with self._lock:
                yield
        except sqlite3.DatabaseError as exc:
            if type(exc) not in (sqlite3.OperationalError, sqlite3.DatabaseError):
                raise
            raise StoreError(f"{doing} {self.path}: {explain(exc)}") from None

    def claim(self) -> None:
        """Make this store the only writer of its database until it is closed: a second
        league run on a database in use would play every game again beside the first.
        Raises StoreError at once, naming the database, when another process holds it.
        (An advisory ``flock`` on the database file, which SQLite's own locks ignore.)"""
        if self._claim is not None:
            return
        try:
            claim = open(self.path, "rb")  # noqa: SIM115 - held until close()
        except OSError as exc:
            raise StoreError(f"cannot open results database {self.path}: {exc.strerror}") from None
        try:
            fcntl.flock(claim.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            claim.close()
            raise StoreError(
                f"{self.path} is in use by another league run; wait until it ends (or stop"
                " it), then run again: the league resumes where it was"
            ) from None
        self._claim = claim

    def close(self) -> None:
        self._db.close()
        if self._claim is not None:
            self._claim.close()  # releases the claim
            self._claim = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ meta

    def bind(self, key: str, value: str) -> None:
        """Record ``key`` = ``value`` on first use; later runs must agree, so results
        of two different leagues never mix in one database.

        For a ``name=value;name=value`` description, the runs agree when every name of
        ``value`` has the same value in the database; names that only the database holds
        (the bots and deals that an earlier version of the referee bound as well) are
        dropped from it."""
        with self._errors(_WRITE), self._transaction():
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (key, value))
                return
            stored = str(row[0])
            if stored != value and agrees(stored, value):
                self._db.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
                return
        if stored != value:
            raise StoreError(
                f"{self.path} holds results for a different {key} "
                f"({difference(stored, value)}); use another --db or the original settings"
            )

    def note(self, key: str, value: str) -> None:
        """Keep ``key`` = ``value``, replacing an earlier value (what the last run used:
        its rules and time control, for the report)."""
        with self._errors(_WRITE), self._transaction():
            self._db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def meta(self, key: str) -> str | None:
        """The value kept under ``key``, if any."""
        with self._errors(_READ):
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def game_dates(self) -> tuple[str, str] | None:
        """When the first and the last stored game finished (UTC, ISO 8601)."""
        with self._errors(_READ):
            first, last = self._db.execute(
                "SELECT MIN(finished_at), MAX(finished_at) FROM games").fetchone()
        return None if first is None else (str(first), str(last))

    def setting(self, key: str, default: str) -> str:
        """The value stored under ``key``; ``default``, stored, the first time."""
        with self._errors(_WRITE), self._transaction():
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (key, default))
                return default
            return str(row[0])

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self._db.execute(f"PRAGMA table_info('{table}')")}

    def register_bots(self, bots: Sequence[tuple[str, str]]) -> None:
        """The league's entrants now, with their commands: any other bot of the
        database is retired (its games stay, and count in the ratings)."""
        with self._errors(_WRITE), self._transaction():
            for name, command in bots:
                self._db.execute(
                    "INSERT INTO bots(name, command, retired) VALUES (?, ?, 0) "
                    "ON CONFLICT(name) DO UPDATE SET command = excluded.command, retired = 0",
                    (name, command),
                )
            marks = ",".join("?" * len(bots))
            self._db.execute(f"UPDATE bots SET retired = 1 WHERE name NOT IN ({marks})",
                             [name for name, _ in bots])

    def retired(self) -> set[str]:
        """The bots that left the league (none in a layout 1 database only read)."""
        with self._errors(_READ):
            if "retired" not in self._columns("bots"):
                return set()
            return {row[0] for row in self._db.execute("SELECT name FROM bots WHERE retired")}

    # -------------------------------------------------------------- meetings

    def add_meeting(self, meeting: Meeting) -> None:
        """Keep a ladder's next table (before its first game is played)."""
        with self._errors(_WRITE), self._transaction():
            self._db.execute(
                "INSERT INTO meetings(name, bots, first_deal, deals, finished) "
                "VALUES (?, ?, ?, ?, ?)",
                (meeting.name, json.dumps(meeting.bots), meeting.first_deal, meeting.deals,
                 int(meeting.finished)))

    def finish_meeting(self, name: str) -> None:
        """Mark a ladder's table played to its end."""
        with self._errors(_WRITE), self._transaction():
            self._db.execute("UPDATE meetings SET finished = 1 WHERE name = ?", (name,))

    def meetings(self) -> list[Meeting]:
        """Every table a ladder chose, in the order it chose them (none in a database
        of an earlier layout only read)."""
        with self._errors(_READ):
            if not self._has_table("meetings"):
                return []
            rows = self._db.execute(
                "SELECT name, bots, first_deal, deals, finished FROM meetings ORDER BY rowid"
            ).fetchall()
        return [Meeting(name, tuple(json.loads(bots)), first, deals, bool(finished))
                for name, bots, first, deals, finished in rows]

    # ----------------------------------------------------------------- games

    def _has_table(self, name: str) -> bool:
        """Whether the database has the table (an older database only read may not)."""
        return self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                (name,)).fetchone() is not None

    def _stored_query(self) -> str:
        """The ids of the games stored, with a result or voided."""
        voided = " UNION SELECT game_id FROM voided_games" if self._has_table(
            "voided_games") else ""
        return "SELECT game_id FROM games" + voided

    def finished_ids(self) -> set[str]:
        with self._errors(_READ):
            return {row[0] for row in self._db.execute(self._stored_query())}

    def has_game(self, game_id: str) -> bool:
        with self._errors(_READ):
            return self._is_stored(game_id)

    def _is_stored(self, game_id: str) -> bool:
        """Whether the game is stored, with a result or voided: one lookup by key in each
        table (a filter on the union of the two tables would read every stored game)."""
        if self._db.execute("SELECT 1 FROM games WHERE game_id = ?", (game_id,)).fetchone():
            return True
        return self._has_table("voided_games") and self._db.execute(
            "SELECT 1 FROM voided_games WHERE game_id = ?", (game_id,)).fetchone() is not None

    def record(self, game: GameRecord) -> bool:
        """Store a finished (or voided) game and the infrastructure faults of its voided
        plays in one transaction; False if it was already stored."""
        with self._errors(_WRITE), self._transaction():
            if self._is_stored(game.game_id):
                return False
            self._db.executemany(
                "INSERT INTO infra_events(game_id, attempt, seat, bot, blame, detail, figures)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(e.game_id, e.attempt, e.seat, e.bot, str(e.blame), e.detail,
                  json.dumps(e.figures.to_json())) for e in game.infra])
            if game.voided:
                self._db.execute("INSERT INTO voided_games(game_id, block, seed) VALUES (?, ?, ?)",
                                 (game.game_id, game.block, game.seed))
                return True
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
            self._db.executemany(
                "INSERT INTO seat_times(game_id, seat, times_ms, near_misses) VALUES (?, ?, ?, ?)",
                [
                    (game.game_id, s.seat, json.dumps(s.time.times_ms), s.time.near_misses)
                    for s in game.seats
                ],
            )
        return True

    def _times(self) -> dict[tuple[str, int], TimeUse]:
        """The stored answer times by (game, seat): none in a database of layout 1 that
        was only read (a league adds the table)."""
        if not self._has_table("seat_times"):
            return {}
        return {
            (game_id, seat): TimeUse(tuple(json.loads(times)), near)
            for game_id, seat, times, near in self._db.execute(
                "SELECT game_id, seat, times_ms, near_misses FROM seat_times"
            )
        }

    def time_use(self) -> dict[str, TimeUse]:
        """Every bot's answer times over all its stored games."""
        by_bot: dict[str, list[TimeUse]] = defaultdict(list)
        with self._errors(_READ):
            times = self._times()
            for game_id, seat, bot in self._db.execute("SELECT game_id, seat, bot FROM seats"):
                use = times.get((game_id, seat))
                if use is not None:
                    by_bot[bot].append(use)
        return {bot: TimeUse.merge(uses) for bot, uses in by_bot.items()}

    def games(self) -> Iterator[GameRecord]:
        """Every stored game, in the order they finished."""
        seats: dict[str, list[SeatRecord]] = defaultdict(list)
        with self._errors(_READ):
            times = self._times()
            for row in self._db.execute(
                "SELECT game_id, seat, bot, place, points, forfeit_reason, forfeit_detail "
                "FROM seats ORDER BY game_id, seat"
            ):
                seat, bot, place, points, reason, detail = row[1:]
                time = times.get((row[0], seat), TimeUse())
                seats[row[0]].append(SeatRecord(seat, bot, place, points, reason, detail, time))
            rows = self._db.execute(
                "SELECT game_id, block, seed, actions, reason, replay FROM games ORDER BY rowid"
            ).fetchall()
        for game_id, block, seed, actions, reason, replay in rows:
            yield GameRecord(game_id, block, seed, actions, reason, tuple(seats[game_id]), replay)

    def voided_count(self) -> int:
        """How many games were voided every time they were played (they have no result)."""
        with self._errors(_READ):
            if not self._has_table("voided_games"):
                return 0
            return int(self._db.execute("SELECT COUNT(*) FROM voided_games").fetchone()[0])

    def voided_games(self) -> list[GameRecord]:
        """The games voided every time they were played (stored without a result), in
        the order they were stored, each with its infrastructure faults."""
        with self._errors(_READ):
            if not self._has_table("voided_games"):
                return []
            rows = self._db.execute(
                "SELECT game_id, block, seed FROM voided_games ORDER BY rowid").fetchall()
        events = self.infra_events()
        return [GameRecord(game_id, block, seed, 0, None, (), voided=True,
                           infra=tuple(e for e in events if e.game_id == game_id))
                for game_id, block, seed in rows]

    def infra_events(self) -> list[InfraEvent]:
        """Every stored infrastructure fault (a voided play of a game), in order."""
        with self._errors(_READ):
            if not self._has_table("infra_events"):
                return []
            rows = self._db.execute("SELECT game_id, attempt, seat, bot, blame, detail, figures"
                                    " FROM infra_events ORDER BY rowid").fetchall()
        return [InfraEvent.from_json({"game_id": g, "attempt": a, "seat": s, "bot": b,
                                      "blame": bl, "detail": d, "figures": json.loads(f)})
                for g, a, s, b, bl, d, f in rows]

    def games_since(self, after: int, limit: int) -> tuple[int, list[GameRecord]]:
        """At most ``limit`` games stored after the game numbered ``after`` (0: from the
        first), in the order they finished, and the number of the last one returned
        (``after`` when none): a reader that keeps up with a growing database reads
        each game once."""
        with self._errors(_READ):
            rows = self._db.execute(
                "SELECT rowid, game_id, block, seed, actions, reason, replay FROM games "
                "WHERE rowid > ? ORDER BY rowid LIMIT ?", (after, limit)).fetchall()
            if not rows:
                return after, []
            return rows[-1][0], self._records(rows, "g.rowid BETWEEN ? AND ?",
                                              (rows[0][0], rows[-1][0]))

    def games_numbered(self, numbers: Sequence[int]) -> list[GameRecord]:
        """The stored games numbered ``numbers`` (``games.rowid``), in that order."""
        wanted = sorted(set(numbers))
        found: dict[int, GameRecord] = {}
        with self._errors(_READ):
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    "SELECT rowid, game_id, block, seed, actions, reason, replay FROM games"
                    f" WHERE rowid IN ({marks})", chunk).fetchall()
                records = self._records(rows, f"g.rowid IN ({marks})", chunk)
                found.update(zip((r[0] for r in rows), records, strict=True))
        return [found[n] for n in numbers if n in found]

    def _records(self, rows: Sequence[tuple[Any, ...]], where: str,
                 args: Sequence[int]) -> list[GameRecord]:
        """The games of ``rows`` with their seats (those of the games ``where`` selects)."""
        seats: dict[str, list[SeatRecord]] = defaultdict(list)
        timed = self._has_table("seat_times")
        times, join = ("s.times_ms, s.near_misses", "LEFT JOIN seat_times s ON s.game_id"
                       " = t.game_id AND s.seat = t.seat") if timed else ("NULL, NULL", "")
        for row in self._db.execute(
            "SELECT t.game_id, t.seat, t.bot, t.place, t.points, t.forfeit_reason, "
            f"t.forfeit_detail, {times} FROM games g JOIN seats t ON t.game_id = g.game_id "
            f"{join} WHERE {where} ORDER BY t.game_id, t.seat", args,
        ):
            game_id, seat, bot, place, points, reason, detail, spent, near = row
            time = TimeUse() if spent is None else TimeUse(tuple(json.loads(spent)), near)
            seats[game_id].append(SeatRecord(seat, bot, place, points, reason, detail, time))
        return [GameRecord(game_id, block, seed, actions, reason, tuple(seats[game_id]),
                           replay)
                for _, game_id, block, seed, actions, reason, replay in rows]

    def game_count(self) -> int:
        with self._errors(_READ):
            return int(self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def forfeit_counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(dict)
        with self._errors(_READ):
            for bot, reason, count in self._db.execute(
                "SELECT bot, forfeit_reason, COUNT(*) FROM seats "
                "WHERE forfeit_reason IS NOT NULL GROUP BY bot, forfeit_reason"
            ):
                out[bot][reason] = count
        return dict(out)

    def _transaction(self) -> Transaction:
        return Transaction(self._db)


_READ = "cannot read results database"
_WRITE = "cannot write to results database"
