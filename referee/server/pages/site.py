"""What every page handler shares: the server's state, the digest of the stored games,
the sessions, the templates, and the way a page is answered.

Everything that reads the database or renders a page runs in a worker thread, at most
:data:`RENDERERS` at a time, so the ladder's clocks on the Trio thread never wait for
a page. The digest is brought up to date at most once every :data:`REFRESH_S`, behind
the requests (only the first read of all is waited for). A page every visitor sees
alike is rendered once for each change of the games it shows; while its new version
renders, the requests get the kept one if it is younger than :data:`STALE_S`, so a
request waits for a worker thread only for a page nobody asked for lately.
"""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

import attrs
import jinja2
import trio
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from referee.competition import CompetitionHost, Submission
from referee.league import Meeting
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
#: A kept page younger than this is shown while its next version renders (0: never,
#: and every request waits for the newest games to be read).
STALE_S: Final = 2.0

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
    def __init__(self, state: CompetitionHost) -> None:
        self.state = state
        self.digest = Digest()
        self.sessions = Sessions(state.store, state.organizer_digest)
        self.limiter = trio.CapacityLimiter(RENDERERS)
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("referee.server.pages", "templates"),
            autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
            lstrip_blocks=True)
        self._refreshed = -REFRESH_S
        self._read_once = False
        #: A read behind the requests is under way.
        self._behind = False
        self._refreshing = trio.Lock()
        #: Every submission that passed, by the name it plays under.
        self.entrants: dict[str, Submission] = {}
        self.active: set[str] = set()
        #: Rendered visitors' pages, with the version of the games they show.
        self._kept: OrderedDict[tuple[str, str, str], _Kept] = OrderedDict()
        #: The shared pages being rendered now.
        self._flights: dict[tuple[str, str, str], _Flight] = {}

    @property
    def name(self) -> str:
        return self.state.config.competition.name

    # ----------------------------------------------------------- reading

    def _read(self) -> None:
        self.digest.catch_up(self.state.store.path)
        passed = [s for s in self.state.store.submissions() if s.entrant is not None]
        self.entrants = {s.entrant: s for s in passed if s.entrant is not None}
        self.active = {s.entrant for s in self.state.store.active() if s.entrant}

    def meetings(self, block: str) -> list[Meeting]:
        """The ladder's meetings of the table of a game's ``block`` (blocking; after
        the first refresh)."""
        return self.digest.stored_games.meetings_of(block)

    async def refresh(self) -> None:
        """Bring the digest and the bots up to date (at most once every REFRESH_S).
        Once something was read, the read runs behind the requests (with STALE_S)
        and the requests show what was read before meanwhile."""
        age = time.monotonic() - self._refreshed
        if age < REFRESH_S or (self._read_once and (self._refreshing.locked()
                                                    or self._behind)):
            return
        if self._read_once and age < REFRESH_S + STALE_S:
            self._behind = True
            trio.lowlevel.spawn_system_task(self._refresh_behind)
            return
        await self._refresh_now()

    async def _refresh_now(self) -> None:
        async with self._refreshing:
            if time.monotonic() - self._refreshed < REFRESH_S:
                return
            await trio.to_thread.run_sync(self._read, limiter=self.limiter)
            self._refreshed = time.monotonic()
            self._read_once = True

    async def _refresh_behind(self) -> None:
        """A read behind the requests. A failure is seen by a later read: the one a
        request waits for once the last read is older than REFRESH_S + STALE_S."""
        try:
            with contextlib.suppress(Exception):
                await self._refresh_now()
        finally:
            self._behind = False

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
        self._kept[key] = _Kept(version, text, time.monotonic())
        self._kept.move_to_end(key)
        while len(self._kept) > KEPT_PAGES:
            self._kept.popitem(last=False)

    async def _shared(self, key: tuple[str, str, str], version: tuple[int, int, int],
                      work: Callable[[], str]) -> _Kept:
        """A page every visitor sees alike: the kept one while ``version`` holds, else
        rendered once (requests for it meanwhile wait for that one rendering rather
        than render it again, each in a worker thread of its own); while it renders,
        the kept one if it is younger than STALE_S. The page with its version."""
        kept = self._kept.get(key)
        if kept is not None and kept.version == version:
            self._kept.move_to_end(key)
            return kept
        flight = self._flights.get(key)
        if kept is not None and time.monotonic() - kept.made < STALE_S:
            if flight is None or flight.version != version:
                flight = self._take_off(key, version)
                trio.lowlevel.spawn_system_task(self._fly_behind, key, flight, work)
            return kept
        if flight is not None and flight.version == version:
            await flight.done.wait()
            if flight.text is not None:
                return _Kept(flight.version, flight.text, 0.0)
            # that rendering failed (or was cancelled): this request tries on its own
        text = await self._fly(key, self._take_off(key, version), work)
        return _Kept(version, text, 0.0)

    def _take_off(self, key: tuple[str, str, str], version: tuple[int, int, int]
                  ) -> _Flight:
        """The rendering of ``key``'s ``version``, for the requests to wait for."""
        flight = _Flight(version)
        self._flights[key] = flight
        return flight

    async def _fly(self, key: tuple[str, str, str], flight: _Flight,
                   work: Callable[[], str]) -> str:
        try:
            text: str = await self.run(work)
            flight.text = text
            self._keep(key, flight.version, text)
            return text
        finally:
            flight.done.set()
            if self._flights.get(key) is flight:
                del self._flights[key]

    async def _fly_behind(self, key: tuple[str, str, str], flight: _Flight,
                          work: Callable[[], str]) -> None:
        """A shared page's next version, rendered behind the requests. A page that
        fails (a bot gone: 404) is rendered again by the next request for it, once
        the kept one is older than STALE_S, and fails there."""
        with contextlib.suppress(Exception):
            await self._fly(key, flight, work)

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
            text = (await self._shared(key, (0, *version[1:]) if stored else version,
                                       work)).text
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
        tag = _tag(version)
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
            shown = await self._shared(key, version, work)
            text, tag = shown.text, _tag(shown.version)  # the tag of what it shows
        response = answer(text, 200, private=private)
        if not private:
            response.headers["ETag"] = tag
        return response


@attrs.frozen
class _Kept:
    """A rendered page every visitor sees alike: the version it shows, and when."""

    version: tuple[int, int, int]
    text: str
    made: float


@attrs.define
class _Flight:
    """A shared page being rendered, for the requests that wait for it."""

    version: tuple[int, int, int]
    done: trio.Event = attrs.Factory(trio.Event)
    text: str | None = None


def _tag(version: tuple[int, int, int]) -> str:
    return '"{}-{}-{}"'.format(*version)


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
