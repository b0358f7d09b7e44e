"""Who is signed in: sessions kept in the competition's database (its store's
``sessions``, :mod:`referee.competition.sessions`), named by a random cookie, each with
its own CSRF token.

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

import hashlib
import secrets
import time
from typing import Final

import attrs
import trio
from starlette.requests import Request
from starlette.responses import Response

from referee.competition import IDLE_S, TOUCH_S, CompetitionStore, Role

__all__ = ["IDLE_S", "SESSION_COOKIE", "TOUCH_S", "Role", "Session", "Sessions",
           "csrf_matches", "set_cookie"]

SESSION_COOKIE: Final = "taki_session"
#: The CSRF token of a visitor who has not signed in (the sign-in form's).
VISITOR_COOKIE: Final = "taki_visitor"


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
    """The sessions of the competition whose store is ``store``; the organizer's are
    live while their token's digest is ``organizer_digest``."""

    def __init__(self, store: CompetitionStore, organizer_digest: str) -> None:
        self.table = store.sessions
        self.organizer_digest = organizer_digest
        self.limiter = trio.CapacityLimiter(1)

    async def start(self, role: Role, name: str, token_sha256: str) -> Session:
        """A new session of the organizer or of participant ``name``, opened with the
        token whose digest is ``token_sha256``. Expired sessions go."""
        session = Session(_token(), role, name)
        await trio.to_thread.run_sync(self.table.start, _hash(session.key), role, name,
                                      token_sha256, time.time(), limiter=self.limiter)
        return session

    async def of(self, request: Request) -> Session | None:
        """The request's session, if it has a live one (its expiry pushed back)."""
        key = request.cookies.get(SESSION_COOKIE)
        if not key or len(key) > 100:
            return None
        live = await trio.to_thread.run_sync(self.table.live, _hash(key), time.time(),
                                             self.organizer_digest, limiter=self.limiter)
        if live is None:
            return None
        role, name = live
        return Session(key, role, name)

    async def end(self, session: Session) -> None:
        await trio.to_thread.run_sync(self.table.end, _hash(session.key),
                                      limiter=self.limiter)

    async def rotated(self, keep: Session, token_sha256: str) -> None:
        """``keep``'s participant has a new token: ``keep`` goes on with it, their other
        sessions end."""
        await trio.to_thread.run_sync(self.table.rebind, _hash(keep.key), keep.name,
                                      token_sha256, limiter=self.limiter)


def visitor_csrf(request: Request) -> tuple[str, bool]:
    """The CSRF token of a visitor's forms, and whether its cookie must be set."""
    known = request.cookies.get(VISITOR_COOKIE)
    if known and 20 <= len(known) <= 100:
        return known, False
    return _token(), True
