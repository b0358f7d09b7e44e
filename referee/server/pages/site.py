"""What every page handler shares: the server's state, the digest of the stored games,
the sessions, the templates, and the way a page is answered.

Everything that reads the database or renders a page runs in a worker thread, at most
:data:`RENDERERS` at a time, so the ladder's clocks on the Trio thread never wait for
a page; the digest is brought up to date at most once every :data:`REFRESH_S`, by one
request while the others wait for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

import jinja2
import trio
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from referee.competition.records import Submission
from referee.league.store import Meeting, ResultStore
from referee.server.pages.digest import Digest
from referee.server.pages.sessions import (
    VISITOR_COOKIE,
    Role,
    Session,
    Sessions,
    set_cookie,
    visitor_csrf,
)
from referee.server.state import ServerState

__all__ = ["PageError", "Site"]

#: Pages rendered at once (each in a worker thread).
RENDERERS: Final = 2
#: The digest is read again from the database at most this often.
REFRESH_S: Final = 1.0

#: What a page may load: its own files only; no frames of it elsewhere.
PAGE_POLICY: Final = ("default-src 'none'; script-src 'self'; style-src 'self';"
                      " img-src 'self' data:; connect-src 'self'; frame-src 'self';"
                      " form-action 'self'; base-uri 'none'; frame-ancestors 'self'")


class PageError(Exception):
    """A page that cannot be shown: its HTTP status and one line for people."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Site:
    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.digest = Digest()
        self.sessions = Sessions()
        self.limiter = trio.CapacityLimiter(RENDERERS)
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("referee.server.pages", "templates"),
            autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
            lstrip_blocks=True)
        self._refreshed = -REFRESH_S
        self._refreshing = trio.Lock()
        #: Every submission that passed, by the name it plays under.
        self.entrants: dict[str, Submission] = {}
        self.active: set[str] = set()

    @property
    def name(self) -> str:
        return self.state.config.competition.name

    # ----------------------------------------------------------- reading

    def _read(self) -> None:
        with ResultStore(self.state.store.path, readonly=True) as results:
            self.digest.catch_up(results)
        passed = [s for s in self.state.store.submissions() if s.entrant is not None]
        self.entrants = {s.entrant: s for s in passed if s.entrant is not None}
        self.active = {s.entrant for s in self.state.store.active() if s.entrant}

    def meetings(self) -> list[Meeting]:
        """The ladder's meetings (blocking)."""
        with ResultStore(self.state.store.path, readonly=True) as results:
            return results.meetings()

    async def refresh(self) -> None:
        """Bring the digest and the bots up to date (at most once every REFRESH_S)."""
        if time.monotonic() - self._refreshed < REFRESH_S:
            return
        async with self._refreshing:
            if time.monotonic() - self._refreshed < REFRESH_S:
                return
            await trio.to_thread.run_sync(self._read, limiter=self.limiter)
            self._refreshed = time.monotonic()

    async def run(self, work: Callable[[], Any]) -> Any:
        """``work()`` in a worker thread, among at most RENDERERS."""
        return await trio.to_thread.run_sync(work, limiter=self.limiter)

    # ---------------------------------------------------------- answering

    def render(self, template: str, **context: Any) -> str:
        """A template, filled (blocking: call it in a worker thread)."""
        return self.templates.get_template(template).render(competition=self.name,
                                                            **context)

    async def page(self, request: Request, template: str,
                   build: Callable[[], dict[str, Any]], *, status: int = 200,
                   session: Session | None = None) -> Response:
        """A whole page: ``build()`` (under the digest's lock) gives the template its
        values, both in a worker thread."""
        csrf, new_visitor = (session.csrf, False) if session else visitor_csrf(request)

        def work() -> str:
            with self.digest.lock:
                values = build()
            return self.render(template, session=session, csrf=csrf,
                               signed_in=_signed_in(session), **values)

        response = answer(await self.run(work), status, private=session is not None)
        if new_visitor:
            set_cookie(response, request, VISITOR_COOKIE, csrf)
        return response

    async def fragment(self, request: Request, template: str,
                       build: Callable[[], dict[str, Any]], *, private: bool = False
                       ) -> Response:
        """Part of a page that its script fetches again; 304 while nothing changed."""
        tag = f'"{self.digest.version}-{len(self.entrants)}-{len(self.active)}"'
        if not private and request.headers.get("if-none-match") == tag:
            return Response(status_code=304, headers={"ETag": tag})

        def work() -> str:
            with self.digest.lock:
                values = build()
            return self.render(template, **values)

        response = answer(await self.run(work), 200, private=private)
        if not private:
            response.headers["ETag"] = tag
        return response


def _signed_in(session: Session | None) -> str:
    if session is None:
        return ""
    return "the organizer" if session.role is Role.ORGANIZER else session.name


def answer(text: str, status: int = 200, *, private: bool = False) -> HTMLResponse:
    """An HTML answer with the pages' security headers."""
    response = HTMLResponse(text, status_code=status)
    secure_headers(response, PAGE_POLICY)
    response.headers["Cache-Control"] = "no-store" if private else "no-cache"
    return response


def secure_headers(response: Response, policy: str) -> None:
    response.headers["Content-Security-Policy"] = policy
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
