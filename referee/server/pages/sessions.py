"""Who is signed in: sessions kept in the competition's database, named by a random
cookie, each with its own CSRF token.

The cookie is HttpOnly and SameSite=Strict (Secure when the page came over TLS); it
holds nothing but the session's random key, and the database keeps only the key's
SHA-256, so a copy of the database signs nobody in. A session's CSRF token is derived
from its key (every form carries it; before signing in, a form carries the token of a
cookie of its own), compared in constant time. A session ends after :data:`IDLE_S`
unused, at sign-out, and when its participant's token changes (rotating the token ends
their other sessions; the one that rotated it goes on); it survives a restart of the
server. A disabled participant's pages refuse their session (and end it).

Every read and write runs in a worker thread, one at a time (:attr:`Sessions.limiter`),
never on the Trio thread.
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, TypeVar

import attrs
import trio
from starlette.requests import Request
from starlette.responses import Response

from referee.competition import CompetitionError
from referee.league import BUSY_TIMEOUT_MS, Transaction, explain

__all__ = ["SESSION_COOKIE", "Role", "Session", "Sessions", "csrf_matches", "set_cookie"]

SESSION_COOKIE: Final = "taki_session"
#: The CSRF token of a visitor who has not signed in (the sign-in form's).
VISITOR_COOKIE: Final = "taki_visitor"
#: How long a session lasts without being used.
IDLE_S: Final = 12 * 3600.0
#: A session's expiry is pushed back at most this often (a write per page is too many).
TOUCH_S: Final = 300.0

SCHEMA: Final = """
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

T = TypeVar("T")


class Role(enum.Enum):
    PARTICIPANT = "participant"
    ORGANIZER = "organizer"


@attrs.frozen
class Session:
    #: The cookie's value (never stored).
    key: str
    role: Role
    #: The participant's name (empty for the organizer).
    name: str

    @property
    def csrf(self) -> str:
        """The session's CSRF token: derived from its key, which it does not reveal."""
        return hashlib.sha256(b"csrf\0" + self.key.encode()).hexdigest()


def _token() -> str:
    return secrets.token_urlsafe(32)


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def csrf_matches(expected: str, given: object) -> bool:
    return isinstance(given, str) and secrets.compare_digest(expected.encode(), given.encode())


def set_cookie(response: Response, request: Request, name: str, value: str, *,
               max_age: int | None = None) -> None:
    """A cookie scripts cannot read and other sites never send."""
    response.set_cookie(name, value, max_age=max_age, path="/", httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")


class Sessions:
    """The sessions of the competition whose database is ``path``; the organizer's are
    live while their token's digest is ``organizer_digest``."""

    def __init__(self, path: Path, organizer_digest: str) -> None:
        self.path = path
        self.organizer_digest = organizer_digest
        self.limiter = trio.CapacityLimiter(1)
        self._made = False

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """A connection of this call's own (blocking), with the table made."""
        try:
            db = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:
            raise CompetitionError(f"cannot open {self.path}: {explain(exc)}") from None
        try:
            db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
            if not self._made:
                with Transaction(db):
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            db.execute(statement)
                self._made = True
            yield db
        except sqlite3.OperationalError as exc:
            raise CompetitionError(f"cannot use the sessions of {self.path}:"
                                   f" {explain(exc)}") from None
        finally:
            db.close()

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def call() -> T:
            with self._db() as db:
                return work(db)
        return await trio.to_thread.run_sync(call, limiter=self.limiter)

    async def start(self, role: Role, name: str, token_sha256: str) -> Session:
        """A new session of the organizer or of participant ``name``, opened with the
        token whose digest is ``token_sha256``. Expired sessions go."""
        session = Session(_token(), role, name)
        now = time.time()

        def insert(db: sqlite3.Connection) -> None:
            with Transaction(db):
                db.execute("DELETE FROM page_sessions WHERE expires <= ?", (now,))
                db.execute("INSERT INTO page_sessions(key_sha256, role, name, token_sha256,"
                           " expires) VALUES (?, ?, ?, ?, ?)",
                           (_hash(session.key), role.value, name, token_sha256,
                            now + IDLE_S))
        await self._run(insert)
        return session

    async def of(self, request: Request) -> Session | None:
        """The request's session, if it has a live one (its expiry pushed back)."""
        key = request.cookies.get(SESSION_COOKIE)
        if not key or len(key) > 100:
            return None
        hashed = _hash(key)
        now = time.time()

        def find(db: sqlite3.Connection) -> Session | None:
            row = db.execute(_LIVE, (hashed, now, self.organizer_digest)).fetchone()
            if row is None:
                return None
            role, name, expires = row
            if expires - now < IDLE_S - TOUCH_S:
                db.execute("UPDATE page_sessions SET expires = ? WHERE key_sha256 = ?",
                           (now + IDLE_S, hashed))
            return Session(key, Role(role), name)
        return await self._run(find)

    async def end(self, session: Session) -> None:
        await self._run(lambda db: db.execute(
            "DELETE FROM page_sessions WHERE key_sha256 = ?", (_hash(session.key),)))

    async def rotated(self, keep: Session, token_sha256: str) -> None:
        """``keep``'s participant has a new token: ``keep`` goes on with it, their other
        sessions end."""
        def rebind(db: sqlite3.Connection) -> None:
            with Transaction(db):
                db.execute("DELETE FROM page_sessions WHERE role = 'participant' AND name = ?"
                           " AND key_sha256 != ?", (keep.name, _hash(keep.key)))
                db.execute("UPDATE page_sessions SET token_sha256 = ? WHERE key_sha256 = ?",
                           (token_sha256, _hash(keep.key)))
        await self._run(rebind)


def visitor_csrf(request: Request) -> tuple[str, bool]:
    """The CSRF token of a visitor's forms, and whether its cookie must be set."""
    known = request.cookies.get(VISITOR_COOKIE)
    if known and 20 <= len(known) <= 100:
        return known, False
    return _token(), True
