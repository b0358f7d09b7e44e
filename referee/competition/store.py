"""Participants, their tokens and their submissions, in the competition's SQLite database
(the same file as the ladder's games, through a connection of its own).

Every change is one transaction, and the checks it depends on (the daily limit, the
owner of a bot's name, the number of active bots) are made inside that transaction, so
two requests at once, or a ``kill -9`` at any moment, never leave a half-made change:
at the next start :meth:`CompetitionStore.resume` sends a submission that was being
built or checked back to the queue (or rejects it after :data:`MAX_ATTEMPTS` starts).

The methods block (SQLite): the server calls them in a thread.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from referee.competition import meta
from referee.competition.errors import CompetitionError, Refusal, Refused
from referee.competition.finals_plan import FinalsPlan
from referee.competition.names import lookalike, name_error
from referee.competition.records import Participant, Status, Step, Submission
from referee.competition.season import SeasonSecret
from referee.competition.sessions import SESSIONS_SCHEMA, SessionTable
from referee.competition.tokens import TOKEN_PATTERN, digest, new_token
from referee.league import BUSY_TIMEOUT_MS, ResultStore, StoreError, Transaction, explain

__all__ = ["MAX_ATTEMPTS", "CompetitionStore"]

#: Starts of a submission's build and check before it is rejected as interrupted: a
#: submission that brings the server down every time must not keep it down.
MAX_ATTEMPTS: Final = 3

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS participants (
    name TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL UNIQUE,
    disabled INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE TABLE IF NOT EXISTS bot_owners (
    bot TEXT PRIMARY KEY,
    participant TEXT NOT NULL REFERENCES participants(name)
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    participant TEXT NOT NULL REFERENCES participants(name),
    bot TEXT NOT NULL,
    command TEXT NOT NULL,
    build TEXT,
    status TEXT NOT NULL,
    version INTEGER,
    step TEXT,
    output TEXT NOT NULL DEFAULT '',
    folder TEXT NOT NULL UNIQUE,
    attempts INTEGER NOT NULL DEFAULT 0,
    received_at TEXT NOT NULL,
    idempotency_key TEXT,
    unpacked_bytes INTEGER NOT NULL DEFAULT 0,
    UNIQUE (bot, version)
);
CREATE INDEX IF NOT EXISTS submissions_by_participant ON submissions(participant, received_at);
CREATE TABLE IF NOT EXISTS retired_by_disable (
    submission INTEGER PRIMARY KEY REFERENCES submissions(id)
);
CREATE TABLE IF NOT EXISTS competition_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
#: Made after the tables (a database of an earlier layout gets its column first).
KEY_INDEX: Final = ("CREATE UNIQUE INDEX IF NOT EXISTS submissions_by_key"
                    " ON submissions(participant, idempotency_key)")

_COLUMNS: Final = ("id, participant, bot, command, build, status, version, step, output,"
                   " folder, received_at, attempts")


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class CompetitionStore:
    """The competition's tables in the database at ``path`` (created, with the league's
    tables, when it is missing); :attr:`sessions`, the pages' sign-in sessions."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            ResultStore(self.path).close()  # creates and marks a results database
        except StoreError as exc:
            raise CompetitionError(str(exc)) from None
        self._lock = threading.RLock()
        with self._errors("cannot open competition database"):
            self._db = sqlite3.connect(self.path, isolation_level=None,
                                       check_same_thread=False)
            self._db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
            self._db.execute("PRAGMA foreign_keys=ON")
            with Transaction(self._db):
                for statement in (SCHEMA + SESSIONS_SCHEMA).split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                columns = {row[1] for row in self._db.execute(
                    "PRAGMA table_info('submissions')")}
                if "idempotency_key" not in columns:  # a database of an earlier layout
                    self._db.execute("ALTER TABLE submissions ADD COLUMN idempotency_key TEXT")
                if "unpacked_bytes" not in columns:
                    self._db.execute("ALTER TABLE submissions ADD COLUMN unpacked_bytes"
                                     " INTEGER NOT NULL DEFAULT 0")
                self._db.execute(KEY_INDEX)
        self.sessions = SessionTable(self._db, self._errors)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> CompetitionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            with self._lock:
                yield
        except sqlite3.DatabaseError as exc:
            if type(exc) not in (sqlite3.OperationalError, sqlite3.DatabaseError):
                raise
            raise CompetitionError(f"{doing} {self.path}: {explain(exc)}") from None

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._errors("cannot write to competition database"), Transaction(self._db):
            yield self._db

    # ------------------------------------------------------------ participants

    def add_participant(self, name: str) -> str:
        """Add a participant; their token, which is shown once and never stored."""
        problem = name_error(name)
        if problem is not None:
            raise CompetitionError(f"participant {problem}")
        token = new_token()
        with self._write() as db:
            if db.execute("SELECT 1 FROM participants WHERE name = ?", (name,)).fetchone():
                raise CompetitionError(f"participant {name!r} exists already")
            db.execute("INSERT INTO participants(name, token_sha256) VALUES (?, ?)",
                       (name, digest(token)))
        return token

    def participants(self, name: str | None = None) -> list[Participant]:
        """Every participant by name (``name`` alone, when given: none if nobody's)."""
        where, args = ("WHERE name = ?", (name,)) if name is not None else ("", ())
        with self._errors("cannot read competition database"):
            rows = self._db.execute("SELECT name, disabled, created_at FROM participants"
                                    f" {where} ORDER BY name", args).fetchall()
        return [Participant(name, bool(disabled), created) for name, disabled, created in rows]

    def disable_participant(self, name: str) -> list[str]:
        """Disable a participant: their token stops working, their pending submissions
        are rejected and their active bots retire. The bots that retired."""
        with self._write() as db:
            if not db.execute("SELECT 1 FROM participants WHERE name = ?", (name,)).fetchone():
                raise CompetitionError(f"no participant named {name!r}")
            db.execute("UPDATE participants SET disabled = 1 WHERE name = ?", (name,))
            db.execute("INSERT OR IGNORE INTO retired_by_disable SELECT id FROM submissions"
                       " WHERE participant = ? AND status = ?", (name, Status.ACTIVE))
            retired = db.execute(
                "SELECT bot, version FROM submissions WHERE participant = ? AND status = ?",
                (name, Status.ACTIVE)).fetchall()
            db.execute("UPDATE submissions SET status = ? WHERE participant = ? AND status = ?",
                       (Status.RETIRED, name, Status.ACTIVE))
            db.execute(
                "UPDATE submissions SET status = ?, output = ? WHERE participant = ?"
                " AND status IN (?, ?, ?)",
                (Status.REJECTED, "the participant was disabled", name,
                 Status.QUEUED, Status.BUILDING, Status.CHECKING))
        return [f"{bot}@{version}" for bot, version in retired]

    def enable_participant(self, name: str) -> list[str]:
        """Enable a disabled participant again: their token works again and the bots
        their disabling retired return to the ladder (the submissions it rejected stay
        rejected: they upload again). The bots that returned."""
        with self._write() as db:
            row = db.execute("SELECT disabled FROM participants WHERE name = ?",
                             (name,)).fetchone()
            if row is None:
                raise CompetitionError(f"no participant named {name!r}")
            if not row[0]:
                raise CompetitionError(f"participant {name!r} is not disabled")
            db.execute("UPDATE participants SET disabled = 0 WHERE name = ?", (name,))
            back = db.execute(
                "SELECT id, bot, version FROM submissions WHERE participant = ? AND status = ?"
                " AND id IN (SELECT submission FROM retired_by_disable) ORDER BY id",
                (name, Status.RETIRED)).fetchall()
            db.executemany("UPDATE submissions SET status = ? WHERE id = ?",
                           [(Status.ACTIVE, sub_id) for sub_id, _, _ in back])
            db.execute("DELETE FROM retired_by_disable WHERE submission IN"
                       " (SELECT id FROM submissions WHERE participant = ?)", (name,))
        return [f"{bot}@{version}" for _, bot, version in back]

    def rotate_token(self, name: str) -> str:
        """Give an enabled participant a new token (shown once, never stored): the old
        one stops working at once."""
        token = new_token()
        with self._write() as db:
            cursor = db.execute(
                "UPDATE participants SET token_sha256 = ? WHERE name = ? AND disabled = 0",
                (digest(token), name))
            if cursor.rowcount != 1:
                raise Refused(Refusal.FORBIDDEN, f"participant {name} is disabled or unknown")
        return token

    def authenticate(self, token: str) -> Participant:
        """The participant whose token this is; Refused when nobody's, or disabled."""
        if TOKEN_PATTERN.match(token) is None:
            raise Refused(Refusal.UNAUTHENTICATED, "invalid token")
        with self._errors("cannot read competition database"):
            row = self._db.execute(
                "SELECT name, disabled, created_at FROM participants WHERE token_sha256 = ?",
                (digest(token),)).fetchone()
        if row is None:
            raise Refused(Refusal.UNAUTHENTICATED, "invalid token")
        if row[1]:
            raise Refused(Refusal.FORBIDDEN, f"participant {row[0]} is disabled")
        return Participant(row[0], False, row[2])

    # ------------------------------------------------------------ submissions

    def recent(self, participant: str) -> tuple[int, int, int]:
        """A participant's uploads and bytes unpacked in the last 24 hours, and their
        submissions waiting for a check; Refused when submissions are frozen."""
        since = _stamp(_now() - timedelta(days=1))
        with self._errors("cannot read competition database"):
            if meta.read(self._db, "frozen") is not None:
                raise Refused(Refusal.FROZEN, "submissions are closed")
            today, used = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(unpacked_bytes), 0) FROM submissions"
                " WHERE participant = ? AND received_at > ?", (participant, since)).fetchone()
            pending = self._db.execute(
                "SELECT COUNT(*) FROM submissions WHERE participant = ? AND status IN (?, ?, ?)",
                (participant, Status.QUEUED, Status.BUILDING, Status.CHECKING)).fetchone()[0]
        return int(today), int(used), int(pending)

    def queued(self) -> list[Submission]:
        """The submissions waiting for their build and check, oldest first."""
        with self._errors("cannot read competition database"):
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE status = ?"
                                    " ORDER BY id", (Status.QUEUED,)).fetchall()
        return [Submission(*row) for row in rows]

    def add_submission(self, participant: str, bot: str, command: str, build: str | None,
                       folder: str, *, per_day: int, max_pending: int,
                       key: str | None = None, size: int = 0) -> Submission:
        """Queue an unpacked upload; Refused for another participant's bot name, a
        participant over a limit, or frozen submissions. With the idempotency ``key`` of
        an earlier upload of the participant, that earlier submission (nothing is added,
        no limit is counted: its folder differs from ``folder``)."""
        now = _now()
        with self._write() as db:
            earlier = self._keyed(db, participant, key)
            if earlier is not None:
                return earlier
            if meta.read(db, "frozen") is not None:
                raise Refused(Refusal.FROZEN, "submissions are closed")
            owner = db.execute("SELECT participant FROM bot_owners WHERE bot = ?",
                               (bot,)).fetchone()
            if owner is not None and owner[0] != participant:
                raise Refused(Refusal.FORBIDDEN,
                              f"bot name {bot!r} belongs to another participant")
            if owner is None:
                close = lookalike(bot, (row[0] for row in db.execute(
                    "SELECT bot FROM bot_owners")))
                if close is not None:
                    raise Refused(Refusal.FORBIDDEN, f"bot name {bot!r} is too close to"
                                  f" the bot name {close!r}, which is taken")
            today = db.execute(
                "SELECT COUNT(*) FROM submissions WHERE participant = ? AND received_at > ?",
                (participant, _stamp(now - timedelta(days=1)))).fetchone()[0]
            if today >= per_day:
                raise Refused(Refusal.TOO_MANY,
                              f"limit reached: {per_day} submissions in 24 hours")
            pending = db.execute(
                "SELECT COUNT(*) FROM submissions WHERE participant = ? AND status IN (?, ?, ?)",
                (participant, Status.QUEUED, Status.BUILDING, Status.CHECKING)).fetchone()[0]
            if pending >= max_pending:
                raise Refused(Refusal.TOO_MANY,
                              f"limit reached: {max_pending} submissions waiting for their"
                              " check; wait for one to finish")
            if owner is None:
                db.execute("INSERT INTO bot_owners(bot, participant) VALUES (?, ?)",
                           (bot, participant))
            cursor = db.execute(
                "INSERT INTO submissions(participant, bot, command, build, status, folder,"
                " received_at, idempotency_key, unpacked_bytes)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (participant, bot, command, build, Status.QUEUED, folder, _stamp(now), key,
                 size))
            row_id = cursor.lastrowid
            assert row_id is not None
            return self._one(db, row_id)

    @staticmethod
    def _one(db: sqlite3.Connection, submission_id: int) -> Submission:
        row = db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE id = ?",
                         (submission_id,)).fetchone()
        if row is None:
            raise Refused(Refusal.NOT_FOUND, f"no submission {submission_id}")
        return Submission(*row)

    @staticmethod
    def _keyed(db: sqlite3.Connection, participant: str, key: str | None) -> Submission | None:
        if key is None:
            return None
        row = db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE participant = ?"
                         " AND idempotency_key = ?", (participant, key)).fetchone()
        return None if row is None else Submission(*row)

    def keyed_submission(self, participant: str, key: str) -> Submission | None:
        """The participant's submission uploaded with idempotency ``key``, or None."""
        with self._errors("cannot read competition database"):
            return self._keyed(self._db, participant, key)

    def submission(self, submission_id: int) -> Submission:
        with self._errors("cannot read competition database"):
            return self._one(self._db, submission_id)

    def submissions(self, participant: str | None = None) -> list[Submission]:
        """A participant's submissions (everyone's with None), newest first."""
        where, args = ("WHERE participant = ?", (participant,)) if participant else ("", ())
        with self._errors("cannot read competition database"):
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM submissions {where} ORDER BY id DESC", args).fetchall()
        return [Submission(*row) for row in rows]

    def folders(self) -> set[str]:
        """The folders of every submission (any other folder is a leftover)."""
        with self._errors("cannot read competition database"):
            return {row[0] for row in self._db.execute("SELECT folder FROM submissions")}

    def resume(self) -> list[Submission]:
        """At start: send every submission interrupted in its build or check back to the
        queue, or reject it after MAX_ATTEMPTS starts. The queued submissions, oldest
        first."""
        with self._write() as db:
            db.execute(
                "UPDATE submissions SET status = ?, step = ?, output = ? WHERE status IN (?, ?)"
                " AND attempts >= ?",
                (Status.REJECTED, Step.INTERRUPTED,
                 f"the server stopped during its build or check {MAX_ATTEMPTS} times",
                 Status.BUILDING, Status.CHECKING, MAX_ATTEMPTS))
            db.execute("UPDATE submissions SET status = ? WHERE status IN (?, ?)",
                       (Status.QUEUED, Status.BUILDING, Status.CHECKING))
            rows = db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE status = ?"
                              " ORDER BY id", (Status.QUEUED,)).fetchall()
        return [Submission(*row) for row in rows]

    def start(self, submission_id: int, status: Status, *, first: bool = True) -> bool:
        """Move a submission on to ``building`` or ``checking``; the ``first`` step of
        its processing counts an attempt. False when it is no longer pending (its
        participant was disabled meanwhile)."""
        with self._write() as db:
            attempt = 1 if first else 0
            cursor = db.execute(
                "UPDATE submissions SET status = ?, attempts = attempts + ? WHERE id = ?"
                " AND status IN (?, ?, ?)",
                (status, attempt, submission_id, Status.QUEUED, Status.BUILDING,
                 Status.CHECKING))
            return cursor.rowcount == 1

    def reject(self, submission_id: int, step: Step, output: str) -> None:
        with self._write() as db:
            db.execute("UPDATE submissions SET status = ?, step = ?, output = ? WHERE id = ?"
                       " AND status IN (?, ?, ?)",
                       (Status.REJECTED, step, output, submission_id,
                        Status.QUEUED, Status.BUILDING, Status.CHECKING))

    def activate(self, submission_id: int, output: str, active_bots: int) -> Submission:
        """The submission passed: it becomes ``name@N`` (N: one more than the bot's
        versions so far), and its participant's oldest active bots beyond
        ``active_bots`` retire. One transaction."""
        with self._write() as db:
            sub = self._one(db, submission_id)
            if not sub.status.pending:
                return sub
            version = db.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM submissions"
                                 " WHERE bot = ?", (sub.bot,)).fetchone()[0]
            db.execute("UPDATE submissions SET status = ?, version = ?, output = ?, step = NULL"
                       " WHERE id = ?", (Status.ACTIVE, version, output, submission_id))
            active = [row[0] for row in db.execute(
                "SELECT id FROM submissions WHERE participant = ? AND status = ?"
                " ORDER BY id DESC", (sub.participant, Status.ACTIVE))]
            for old in active[active_bots:]:
                db.execute("UPDATE submissions SET status = ? WHERE id = ?",
                           (Status.RETIRED, old))
            return self._one(db, submission_id)

    def active(self) -> list[Submission]:
        """The bots that play in the ladder, oldest first."""
        with self._errors("cannot read competition database"):
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM submissions WHERE status = ? ORDER BY id",
                (Status.ACTIVE,)).fetchall()
        return [Submission(*row) for row in rows]

    def finalists(self) -> list[Submission]:
        """Each participant's latest bot in the ladder (the disabled ones have none)."""
        latest: dict[str, Submission] = {}
        for sub in self.active():  # oldest first: the last one of each participant wins
            latest[sub.participant] = sub
        return sorted(latest.values(), key=lambda s: s.participant)

    # ------------------------------------------------------------ meta

    def freeze(self) -> None:
        """Close submissions (the finals): every later upload is refused."""
        with self._write() as db:
            meta.keep(db, "frozen", _stamp(_now()))

    def begin_finals(self, plan: FinalsPlan) -> FinalsPlan:
        """Close submissions, pause the ladder and keep the finals' plan, in one
        transaction; the plan kept (the first one, when the finals had begun already)."""
        with self._write() as db:
            kept = meta.read(db, "finals")
            if kept is not None:
                return FinalsPlan.from_text(kept)
            stamp = _stamp(_now())
            meta.keep_first(db, "frozen", stamp)
            meta.keep(db, "paused", stamp)
            meta.keep(db, "finals", plan.to_text())
        return plan

    def finals_plan(self) -> FinalsPlan | None:
        """The plan of the finals begun by the server (None before they begin)."""
        with self._errors("cannot read competition database"):
            kept = meta.read(self._db, "finals")
        return None if kept is None else FinalsPlan.from_text(kept)

    def finish_finals(self) -> None:
        """The finals are played and their report is written."""
        with self._write() as db:
            meta.keep(db, "finals_done", _stamp(_now()))

    def finals_done(self) -> bool:
        with self._errors("cannot read competition database"):
            return meta.read(self._db, "finals_done") is not None

    def set_paused(self, paused: bool) -> None:
        """Keep whether the organizer paused the ladder, for the next start."""
        with self._write() as db:
            if paused:
                meta.keep(db, "paused", _stamp(_now()))
            else:
                meta.forget(db, "paused")

    def paused(self) -> bool:
        with self._errors("cannot read competition database"):
            return meta.read(self._db, "paused") is not None

    def season(self, seed: int | None = None) -> SeasonSecret:
        """The season's seed and salt: made at the first call (with ``seed``, else the
        seed a ladder of this database already played with, else a fresh one)."""
        with self._write() as db:
            return meta.season(db, seed)

    def end_season(self) -> str:
        """The season is over: submissions close (the seed, once published, also
        derives the finals' deals) and its seed may be published; when it ended (UTC)."""
        with self._write() as db:
            meta.keep_first(db, "frozen", _stamp(_now()))
            meta.keep_first(db, "season_ended", _stamp(_now()))
            ended = meta.read(db, "season_ended")
        assert ended is not None
        return ended

    def season_ended(self) -> str | None:
        """When the organizer ended the season (None: it runs)."""
        with self._errors("cannot read competition database"):
            return meta.read(self._db, "season_ended")

    def frozen(self) -> bool:
        with self._errors("cannot read competition database"):
            return meta.read(self._db, "frozen") is not None
