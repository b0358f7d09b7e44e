"""What every page handler shares: the server's state, the digest of the stored games,
the sessions, the templates, and the way a page is answered.

Everything that reads the database or renders a page runs in a worker thread, at most
:data:`RENDERERS` at a time, so the ladder's clocks on the Trio thread never wait for
a page; the digest is brought up to date at most once every :data:`REFRESH_S`, by one
request while the others wait for it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

import attrs
import jinja2
import trio
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from referee.competition import Submission
from referee.league import Meeting, ResultStore
from referee.server import ServerState
from referee.server.pages.digest import Digest
from referee.server.pages.sessions import (
    VISITOR_COOKIE,
    Role,
    Session,
    Sessions,
    set_cookie,
    visitor_csrf,
)

__all__ = ["PageError", "Site"]

#: Pages rendered at once (each in a worker thread).
RENDERERS: Final = 2
#: Visitors' pages kept rendered.
KEPT_PAGES: Final = 256
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
        self.sessions = Sessions(state.store.path, state.organizer_digest)
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
        #: Rendered visitors' pages, with the version of the games they show.
        self._kept: OrderedDict[tuple[str, str, str], tuple[tuple[int, int, int], str]] = \
            OrderedDict()
        #: The shared pages being rendered now.
        self._flights: dict[tuple[str, str, str], _Flight] = {}

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
        """Bring the digest and the bots up to date (at most once every REFRESH_S).
        While one request reads, the others show what was read before (once there is
        something)."""
        if time.monotonic() - self._refreshed < REFRESH_S:
            return
        if self._refreshing.locked() and self._refreshed >= 0:
            return
        async with self._refreshing:
            if time.monotonic() - self._refreshed < REFRESH_S:
                return
            await trio.to_thread.run_sync(self._read, limiter=self.limiter)
            self._refreshed = time.monotonic()

    async def locked(self, work: Callable[[], Any]) -> Any:
        """``work()`` with the digest's lock held, in a worker thread (the lock may be
        held a while by a large batch of new games: the Trio thread never waits for it)."""
        def under_lock() -> Any:
            with self.digest.lock:
                return work()
        return await self.run(under_lock)

    async def run(self, work: Callable[[], Any]) -> Any:
        """``work()`` in a worker thread, among at most RENDERERS."""
        return await trio.to_thread.run_sync(work, limiter=self.limiter)

    # ---------------------------------------------------------- answering

    def render(self, template: str, **context: Any) -> str:
        """A template, filled (blocking: call it in a worker thread)."""
        return self.templates.get_template(template).render(competition=self.name,
                                                            **context)

    def _version(self) -> tuple[int, int, int]:
        """What a page of the stored games depends on: it changes when they change."""
        return self.digest.version, len(self.entrants), len(self.active)

    def _keep(self, key: tuple[str, str, str], version: tuple[int, int, int],
              text: str) -> None:
        self._kept[key] = (version, text)
        self._kept.move_to_end(key)
        while len(self._kept) > KEPT_PAGES:
            self._kept.popitem(last=False)

    async def _shared(self, key: tuple[str, str, str], version: tuple[int, int, int],
                      work: Callable[[], str]) -> str:
        """A page every visitor sees alike: the kept one while ``version`` holds, else
        rendered once (requests for it meanwhile wait for that one rendering rather
        than render it again, each in a worker thread of its own)."""
        kept = self._kept.get(key)
        if kept is not None and kept[0] == version:
            self._kept.move_to_end(key)
            return kept[1]
        flight = self._flights.get(key)
        if flight is not None and flight.version == version:
            await flight.done.wait()
            if flight.text is not None:
                return flight.text
            # that rendering failed (or was cancelled): this request tries on its own
        flight = _Flight(version)
        self._flights[key] = flight
        try:
            flight.text = await self.run(work)
            self._keep(key, version, flight.text)
            return flight.text
        finally:
            flight.done.set()
            if self._flights.get(key) is flight:
                del self._flights[key]

    async def page(self, request: Request, template: str,
                   build: Callable[[], dict[str, Any]], *, status: int = 200,
                   session: Session | None = None, form: bool = False,
                   keep: bool = True, stored: bool = False) -> Response:
        """A whole page: ``build()`` (under the digest's lock) gives the template its
        values, both in a worker thread. A page with a ``form`` for visitors gives them
        its CSRF cookie. The pages a visitor sees (no session, no form) are the same for
        every visitor: they are kept, each until the stored games change (unless ``keep`` is
        False: the page shows something else that changes). A page of a ``stored``
        game does not change with the games stored after it: it is kept until the bots
        change."""
        csrf, new_visitor = (session.csrf, False) if session else visitor_csrf(request)
        shared = keep and session is None and not form and status == 200
        key = (template, request.url.path, request.url.query)

        def work() -> str:
            with self.digest.lock:
                values = build()
            return self.render(template, session=session, csrf=csrf if form or session
                               else "", signed_in=_signed_in(session), **values)

        if shared:
            version = self._version()
            text = await self._shared(key, (0, *version[1:]) if stored else version, work)
        else:
            text = await self.run(work)
        response = answer(text, status, private=session is not None)
        if new_visitor and form:
            set_cookie(response, request, VISITOR_COOKIE, csrf)
        return response

    async def fragment(self, request: Request, template: str,
                       build: Callable[[], dict[str, Any]], *, private: bool = False
                       ) -> Response:
        """Part of a page that its script fetches again; 304 while nothing changed."""
        version = self._version()
        tag = '"{}-{}-{}"'.format(*version)
        if not private and request.headers.get("if-none-match") == tag:
            return Response(status_code=304, headers={"ETag": tag})

        def work() -> str:
            with self.digest.lock:
                values = build()
            return self.render(template, **values)

        if private:
            text = await self.run(work)
        else:
            key = (template, request.url.path, request.url.query)
            text = await self._shared(key, version, work)
        response = answer(text, 200, private=private)
        if not private:
            response.headers["ETag"] = tag
        return response


@attrs.define
class _Flight:
    """A shared page being rendered, for the requests that wait for it."""

    version: tuple[int, int, int]
    done: trio.Event = attrs.Factory(trio.Event)
    text: str | None = None


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
