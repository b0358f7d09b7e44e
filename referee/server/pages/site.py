"""What every page handler shares: the server's state, the digest of the stored games,
the sessions, the templates, and the way a page is answered.

Everything that reads the database or renders a page runs in a worker thread, so the
ladder's clocks on the Trio thread never wait for a page: the shared pages (the
leaderboard, the bot pages) at most :data:`RENDERERS` at a time, everything else (a
game's page, a signed-in visitor's page, a replay, a log) at most
:data:`LIGHT_RENDERERS` at a time beside them, so a slow leaderboard never keeps a
game's page waiting; the digest's reads have a thread of their own. The digest is
brought up to date at most once every :data:`REFRESH_S`, behind the requests (only the
first read of all is waited for). A page every visitor sees alike is rendered once for
each change of the games it shows (so at most once every REFRESH_S), and every request
for it meanwhile gets that one rendering, without entering a worker thread; while its
new version renders, the requests get the kept one if it is younger than
:data:`STALE_S`, so a request waits for a worker thread only for a page nobody asked for
lately. Such a page has an ETag (a digest of its text): a request that has it already
gets 304. A signed-in visitor's page is never kept nor stored by a browser
(``Cache-Control: no-store``), and every page varies with the cookies.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any, Final

import attrs
import jinja2
import trio
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from referee.competition import CompetitionHost, Status, Submission
from referee.league import Meeting
from referee.server.pages.digest import Digest
from referee.server.pages.kept import Flight, Kept, Rendered, Shelf, Timing, entity_tag
from referee.server.pages.sessions import (
    VISITOR_COOKIE,
    Role,
    Session,
    Sessions,
    set_cookie,
    visitor_csrf,
)
from referee.server.pages.stored import sql_seconds

__all__ = ["PageError", "Site", "answer", "matches", "not_modified", "secure_headers"]

#: Shared pages rendered at once (each in a worker thread).
RENDERERS: Final = 2
#: Other pages rendered at once, and other work of the requests (each in a worker
#: thread), beside the shared pages.
LIGHT_RENDERERS: Final = 4
#: Visitors' pages kept rendered, besides the games' pages.
KEPT_PAGES: Final = 256
#: Crosstables kept rendered (a leaderboard's page renders its crosstable again only
#: when a game among its bots landed).
KEPT_CROSSTABLES: Final = 16
#: Games' pages kept rendered.
KEPT_GAMES: Final = 512
#: How long a browser may show a game's page it has without asking again (the page
#: of a stored game changes only when a bot's owner would, which never happens).
GAME_MAX_AGE_S: Final = 300
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
        self.light = trio.CapacityLimiter(LIGHT_RENDERERS)
        self._reading = trio.CapacityLimiter(1)
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
        #: The submissions' mark when they were read (``Stored.submissions_mark``).
        self._submissions_mark: tuple[tuple[Any, ...], ...] | None = None
        #: Rendered visitors' pages, with the version of the games they show.
        self._kept: Shelf[tuple[str, str, str], Kept] = Shelf(KEPT_PAGES)
        self._games: Shelf[tuple[str, str, str], Kept] = Shelf(KEPT_GAMES)
        #: Rendered crosstables, by what they show (``referee.server.pages.board``;
        #: used with the digest's lock held).
        self.crosstables: Shelf[Any, str] = Shelf(KEPT_CROSSTABLES)
        #: The shared pages being rendered now.
        self._flights: dict[tuple[str, str, str], Flight] = {}

    @property
    def name(self) -> str:
        return self.state.config.competition.name

    # ----------------------------------------------------------- reading

    def _read(self) -> None:
        self.digest.catch_up(self.state.store.path)
        mark = self.digest.stored_games.submissions_mark()
        if mark == self._submissions_mark:  # (a thousand bots are 2,000 objects to make)
            return
        passed = [s for s in self.state.store.submissions() if s.entrant is not None]
        self.entrants = {s.entrant: s for s in passed if s.entrant is not None}
        self.active = {s.entrant for s in passed
                       if s.status is Status.ACTIVE and s.entrant is not None}
        self._submissions_mark = mark

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
            await trio.to_thread.run_sync(self._read, limiter=self._reading)
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
        """``work()`` in a worker thread, among at most LIGHT_RENDERERS."""
        return await trio.to_thread.run_sync(work, limiter=self.light)

    # ---------------------------------------------------------- answering

    def render(self, template: str, **context: Any) -> str:
        """A template, filled (blocking: call it in a worker thread)."""
        return self.templates.get_template(template).render(competition=self.name,
                                                            **context)

    def render_part(self, template: str, **context: Any) -> str:
        """A template that is a part of a page (blocking: in a worker thread)."""
        return self.templates.get_template(template).render(**context)

    def _version(self) -> tuple[int, int, int]:
        """What a page of the stored games depends on: it changes when they change."""
        return self.digest.version, len(self.entrants), len(self.active)

    def _work(self, template: str, build: Callable[[], dict[str, Any]],
              context: dict[str, Any], *, locked: bool = True) -> Callable[[float], Rendered]:
        """The rendering of a page (blocking), given when it was asked for; ``build``
        runs with the digest's lock held unless not ``locked``."""
        def work(asked: float) -> Rendered:
            began = time.perf_counter()
            sql = sql_seconds()
            with self.digest.lock if locked else contextlib.nullcontext():
                values = build()
            built = time.perf_counter()
            body = self.render(template, **context, **values).encode()
            done = time.perf_counter()
            return Rendered(body, entity_tag(body), Timing(
                queue=began - asked, sql=sql_seconds() - sql, values=built - began,
                render=done - built))
        return work

    async def _rendered(self, work: Callable[[float], Rendered],
                        limiter: trio.CapacityLimiter) -> Rendered:
        asked = time.perf_counter()
        page: Rendered = await trio.to_thread.run_sync(work, asked, limiter=limiter)
        return page

    async def _shared(self, key: tuple[str, str, str], version: tuple[int, int, int],
                      work: Callable[[float], Rendered], *, stored: bool = False
                      ) -> tuple[Rendered, str]:
        """A page every visitor sees alike: the kept one while ``version`` holds, else
        rendered once (requests for it meanwhile wait for that one rendering rather
        than render it again, each in a worker thread of its own); while it renders,
        the kept one if it is younger than STALE_S. The page, and how it was found
        (:data:`referee.server.pages.kept.HOW`). A ``stored`` game's page is kept on a
        shelf of its own and rendered among the light work."""
        shelf = self._games if stored else self._kept
        kept = shelf.get(key)
        if kept is not None and kept.version == version:
            return kept.page, "hit"
        flight = self._flights.get(key)
        if kept is not None and time.monotonic() - kept.made < STALE_S:
            if flight is None or flight.version != version:
                flight = self._take_off(key, version)
                trio.lowlevel.spawn_system_task(self._fly_behind, key, flight, work, stored)
            return kept.page, "stale"
        if flight is not None and flight.version == version:
            await flight.done.wait()
            if flight.page is not None:
                return flight.page, "joined"
            # that rendering failed (or was cancelled): this request tries on its own
        return await self._fly(key, self._take_off(key, version), work, stored), "miss"

    def _take_off(self, key: tuple[str, str, str], version: tuple[int, int, int]) -> Flight:
        """The rendering of ``key``'s ``version``, for the requests to wait for."""
        flight = Flight(version)
        self._flights[key] = flight
        return flight

    async def _fly(self, key: tuple[str, str, str], flight: Flight,
                   work: Callable[[float], Rendered], stored: bool) -> Rendered:
        try:
            page = await self._rendered(work, self.light if stored else self.limiter)
            flight.page = page
            (self._games if stored else self._kept).put(
                key, Kept(flight.version, page, time.monotonic()))
            return page
        finally:
            flight.done.set()
            if self._flights.get(key) is flight:
                del self._flights[key]

    async def _fly_behind(self, key: tuple[str, str, str], flight: Flight,
                          work: Callable[[float], Rendered], stored: bool) -> None:
        """A shared page's next version, rendered behind the requests. A page that
        fails (a bot gone: 404) is rendered again by the next request for it, once
        the kept one is older than STALE_S, and fails there."""
        with contextlib.suppress(Exception):
            await self._fly(key, flight, work, stored)

    async def page(self, request: Request, template: str,
                   build: Callable[[], dict[str, Any]], *, status: int = 200,
                   session: Session | None = None, form: bool = False,
                   keep: bool = True, stored: bool = False, locked: bool = True
                   ) -> Response:
        """A whole page: ``build()`` (under the digest's lock unless not ``locked``: a
        page that reads no bot of the digest, only the database and the entrants) gives
        the template its values, both in a worker thread. A page with a ``form`` for
        visitors gives them its CSRF cookie. The pages a visitor sees (no session, no
        form) are the same for every visitor: they are kept, each until the stored games
        change (unless ``keep`` is False: the page shows something else that changes),
        with an ETag (a request that has the page gets 304). A page of a ``stored`` game
        does not change with the games stored after it: it is kept until the bots
        change, and browsers may keep it :data:`GAME_MAX_AGE_S`."""
        csrf, new_visitor = (session.csrf, False) if session else visitor_csrf(request)
        shared = keep and session is None and not form and status == 200
        work = self._work(template, build, {
            "session": session, "csrf": csrf if form or session else "",
            "signed_in": _signed_in(session)}, locked=locked)
        if shared:
            version = self._version()
            key = (template, request.url.path, request.url.query)
            shown, how = await self._shared(key, (0, *version[1:]) if stored else version,
                                            work, stored=stored)
        else:
            shown, how = await self._rendered(work, self.light), "miss"
        request.state.timing = attrs.evolve(shown.timing, how=how)
        cache = (f"public, max-age={GAME_MAX_AGE_S}" if stored else "no-cache") if shared \
            else None
        if shared and matches(request, shown.tag):
            return not_modified(shown.tag, cache or "no-cache")
        response = answer(shown.body, status, private=session is not None)
        if shared:
            response.headers["ETag"] = shown.tag
            response.headers["Cache-Control"] = cache or "no-cache"
        if new_visitor and form:
            set_cookie(response, request, VISITOR_COOKIE, csrf)
        return response

    async def fragment(self, request: Request, template: str,
                       build: Callable[[], dict[str, Any]], *, private: bool = False
                       ) -> Response:
        """Part of a page that its script fetches again; 304 while nothing changed."""
        work = self._work(template, build, {})
        if private:
            shown, how = await self._rendered(work, self.light), "miss"
        else:
            key = (template, request.url.path, request.url.query)
            shown, how = await self._shared(key, self._version(), work)
        request.state.timing = attrs.evolve(shown.timing, how=how)
        if not private and matches(request, shown.tag):
            return not_modified(shown.tag, "no-cache")
        response = answer(shown.body, 200, private=private)
        if not private:
            response.headers["ETag"] = shown.tag  # the tag of what it shows
        return response


def matches(request: Request, tag: str) -> bool:
    """Whether the request has the page tagged ``tag`` already (If-None-Match)."""
    given = request.headers.get("if-none-match")
    return given is not None and (given.strip() == "*" or tag in
                                  (t.strip().removeprefix("W/") for t in given.split(",")))


def not_modified(tag: str, cache: str) -> Response:
    """304: the page the request has is the page."""
    return Response(status_code=304, headers={"ETag": tag, "Cache-Control": cache,
                                              "Vary": "Cookie"})


def _signed_in(session: Session | None) -> str:
    if session is None:
        return ""
    return "the organizer" if session.role is Role.ORGANIZER else session.name


def answer(text: str | bytes, status: int = 200, *, private: bool = False) -> HTMLResponse:
    """An HTML answer (``text``, or its UTF-8) with the pages' security headers; a
    ``private`` one is never stored."""
    response = HTMLResponse(text, status_code=status)
    secure_headers(response, PAGE_POLICY)
    response.headers["Cache-Control"] = "no-store" if private else "no-cache"
    response.headers["Vary"] = "Cookie"
    return response


def secure_headers(response: Response, policy: str) -> None:
    response.headers["Content-Security-Policy"] = policy
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
