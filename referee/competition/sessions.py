"""Who is signed in to the competition's pages: the ``page_sessions`` table of the
competition's database, beside the participants it joins, through the store's own
connection (:attr:`CompetitionStore.sessions <referee.competition.CompetitionStore>`).

A session is named by the SHA-256 of its random key (the key itself, the cookie's value,
is never stored, so a copy of the database signs nobody in) and remembers the digest of
the token it was opened with: it is live while it has not expired and its participant
(or the organizer) still has that token. A session ends after :data:`IDLE_S` unused;
its expiry is pushed back at most every :data:`TOUCH_S`. The cookies, CSRF tokens and
the clock are the pages' (``referee.server.pages.sessions``).

The methods block (SQLite): the server calls them in a thread.
"""

from __future__ import annotations

import contextlib
import enum
import sqlite3
from collections.abc import Callable
from typing import Final

from referee.league import Transaction

__all__ = ["IDLE_S", "SESSIONS_SCHEMA", "TOUCH_S", "Role", "SessionTable"]

#: How long a session lasts without being used.
IDLE_S: Final = 12 * 3600.0
#: A session's expiry is pushed back at most this often (a write per page is too many).
TOUCH_S: Final = 300.0

SESSIONS_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS page_sessions (
    key_sha256 TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    name TEXT NOT NULL,
    token_sha256 TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS page_sessions_by_name ON page_sessions(name);
"""

#: A session is live while it has not expired and was opened with the token its
#: participant (or the organizer) has now.
_LIVE: Final = """
SELECT s.role, s.name, s.expires FROM page_sessions AS s
LEFT JOIN participants AS p ON p.name = s.name AND s.role = 'participant'
WHERE s.key_sha256 = ? AND s.expires > ? AND (
    (s.role = 'organizer' AND s.token_sha256 = ?)
    OR (s.role = 'participant' AND p.token_sha256 = s.token_sha256))
"""

#: The store's guard of its connection: ``guard(doing)`` holds the store's lock and
#: turns a database error into a CompetitionError that says what was being done.
Guard = Callable[[str], contextlib.AbstractContextManager[None]]


class Role(enum.Enum):
    """Whom a session signs in."""

    PARTICIPANT = "participant"
    ORGANIZER = "organizer"


class SessionTable:
    """The page sessions of the competition database open on ``db``, used under the
    store's ``guard``."""

    def __init__(self, db: sqlite3.Connection, guard: Guard) -> None:
        self._db = db
        self._guard = guard

    def start(self, key_sha256: str, role: Role, name: str, token_sha256: str,
              now: float) -> None:
        """Store a new session (of participant ``name``, or of the organizer with
        ``name`` empty) opened with the token whose digest is ``token_sha256``; the
        expired sessions go."""
        with self._guard("cannot use the sessions of"), Transaction(self._db):
            self._db.execute("DELETE FROM page_sessions WHERE expires <= ?", (now,))
            self._db.execute(
                "INSERT INTO page_sessions(key_sha256, role, name, token_sha256, expires)"
                " VALUES (?, ?, ?, ?, ?)",
                (key_sha256, role.value, name, token_sha256, now + IDLE_S))

    def live(self, key_sha256: str, now: float, organizer_digest: str
             ) -> tuple[Role, str] | None:
        """The role and name of the live session ``key_sha256`` (its expiry pushed
        back), or None; the organizer's sessions are live while the organizer's token
        digest is ``organizer_digest``."""
        with self._guard("cannot use the sessions of"):
            row = self._db.execute(_LIVE, (key_sha256, now, organizer_digest)).fetchone()
            if row is None:
                return None
            role, name, expires = row
            if expires - now < IDLE_S - TOUCH_S:
                self._db.execute("UPDATE page_sessions SET expires = ? WHERE key_sha256 = ?",
                                 (now + IDLE_S, key_sha256))
        return Role(role), name

    def end(self, key_sha256: str) -> None:
        with self._guard("cannot use the sessions of"):
            self._db.execute("DELETE FROM page_sessions WHERE key_sha256 = ?", (key_sha256,))

    def rebind(self, keep_sha256: str, name: str, token_sha256: str) -> None:
        """Participant ``name`` has a new token (digest ``token_sha256``): the session
        ``keep_sha256`` goes on with it, their other sessions end."""
        with self._guard("cannot use the sessions of"), Transaction(self._db):
            self._db.execute(
                "DELETE FROM page_sessions WHERE role = 'participant' AND name = ?"
                " AND key_sha256 != ?", (name, keep_sha256))
            self._db.execute("UPDATE page_sessions SET token_sha256 = ? WHERE key_sha256 = ?",
                             (token_sha256, keep_sha256))
