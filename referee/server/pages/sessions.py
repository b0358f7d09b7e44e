"""Who is signed in: sessions kept in memory, named by a random cookie, each with its
own CSRF token.

The cookie is HttpOnly and SameSite=Strict (Secure when the page came over TLS); it
holds nothing but the session's random name. Every form carries the session's CSRF
token (before signing in, the token of a cookie of its own), compared in constant time.
A restart of the server forgets the sessions: people sign in again. Rotating a
participant's token ends their other sessions.
"""

from __future__ import annotations

import enum
import secrets
import time
from collections import OrderedDict
from typing import Final

import attrs
from starlette.requests import Request
from starlette.responses import Response

__all__ = ["SESSION_COOKIE", "Role", "Session", "Sessions", "csrf_matches", "set_cookie"]

SESSION_COOKIE: Final = "taki_session"
#: The CSRF token of a visitor who has not signed in (the sign-in form's).
VISITOR_COOKIE: Final = "taki_visitor"
#: How long a session lasts without being used.
IDLE_S: Final = 12 * 3600.0
#: The most sessions kept (the least recently used one goes first).
MAX_SESSIONS: Final = 10_000


class Role(enum.Enum):
    PARTICIPANT = "participant"
    ORGANIZER = "organizer"


@attrs.define
class Session:
    key: str
    role: Role
    #: The participant's name (empty for the organizer).
    name: str
    csrf: str
    used: float


def _token() -> str:
    return secrets.token_urlsafe(32)


def csrf_matches(expected: str, given: object) -> bool:
    return isinstance(given, str) and secrets.compare_digest(expected.encode(), given.encode())


def set_cookie(response: Response, request: Request, name: str, value: str, *,
               max_age: int | None = None) -> None:
    """A cookie scripts cannot read and other sites never send."""
    response.set_cookie(name, value, max_age=max_age, path="/", httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")


class Sessions:
    """The sessions of this server process (used from the Trio thread only)."""

    def __init__(self) -> None:
        self._by_key: OrderedDict[str, Session] = OrderedDict()

    def start(self, role: Role, name: str) -> Session:
        session = Session(_token(), role, name, _token(), time.monotonic())
        self._by_key[session.key] = session
        while len(self._by_key) > MAX_SESSIONS:
            self._by_key.popitem(last=False)
        return session

    def of(self, request: Request) -> Session | None:
        """The request's session, if it has a live one."""
        key = request.cookies.get(SESSION_COOKIE)
        session = None if key is None else self._by_key.get(key)
        if session is None:
            return None
        now = time.monotonic()
        if now - session.used > IDLE_S:
            del self._by_key[session.key]
            return None
        session.used = now
        self._by_key.move_to_end(session.key)
        return session

    def end(self, session: Session) -> None:
        self._by_key.pop(session.key, None)

    def end_others(self, name: str, keep: Session) -> None:
        """End every session of participant ``name`` but ``keep``."""
        for key in [k for k, s in self._by_key.items()
                    if s.role is Role.PARTICIPANT and s.name == name and s is not keep]:
            del self._by_key[key]


def visitor_csrf(request: Request) -> tuple[str, bool]:
    """The CSRF token of a visitor's forms, and whether its cookie must be set."""
    known = request.cookies.get(VISITOR_COOKIE)
    if known and 20 <= len(known) <= 100:
        return known, False
    return _token(), True
