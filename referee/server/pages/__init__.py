"""The competition's pages: server-rendered HTML (Jinja2 templates) beside the JSON API,
with a little script for the parts that update themselves, and nothing loaded from
anywhere but this server.

:func:`mount_pages` adds them to the server's Starlette application.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from referee.competition import CompetitionHost
from referee.server.pages import accounts, finals, organizer, public
from referee.server.pages.kept import Timing
from referee.server.pages.site import PageError, Site, answer

__all__ = ["mount_pages"]

Handler = Callable[[Request], Awaitable[Response]]

ROUTES: list[tuple[str, Handler, str]] = [
    ("/", public.board, "GET"),
    ("/live/board", public.board_rows, "GET"),
    ("/bots/{bot}", public.bot_page, "GET"),
    ("/games/{number:int}", public.game_page, "GET"),
    ("/games/{number:int}/viewer", public.game_viewer, "GET"),
    ("/games/{number:int}/replay.json", public.game_replay, "GET"),
    ("/games/{number:int}/seats/{seat:int}/log", public.game_log, "GET"),
    ("/games/{number:int}/seats/{seat:int}/log.txt", public.game_log_download, "GET"),
    ("/signin", accounts.sign_in_form, "GET"),
    ("/signin", accounts.sign_in, "POST"),
    ("/signout", accounts.sign_out, "POST"),
    ("/me", accounts.my_page, "GET"),
    ("/live/me", accounts.my_submissions, "GET"),
    ("/me/upload", accounts.upload, "POST"),
    ("/me/token", accounts.rotate_token, "POST"),
    ("/organizer", organizer.organizer_page, "GET"),
    ("/organizer/participants", organizer.add_participant, "POST"),
    ("/organizer/disable", organizer.disable_participant, "POST"),
    ("/organizer/enable", organizer.enable_participant, "POST"),
    ("/organizer/ladder", organizer.ladder, "POST"),
    ("/organizer/freeze", organizer.freeze, "POST"),
    ("/organizer/season", organizer.end_season, "POST"),
    ("/organizer/finals", organizer.start_finals, "POST"),
    ("/finals", finals.finals_page, "GET"),
]


def _shown(handler: Handler) -> Handler:
    """A page that cannot be shown answers with its status and a page that says why.
    Every answer says what it cost in its ``Server-Timing`` header
    (:class:`referee.server.pages.kept.Timing`)."""
    async def wrapped(request: Request) -> Response:
        began = time.perf_counter()
        try:
            response = await handler(request)
        except PageError as exc:
            site = public.site_of(request)
            message, status = exc.message, exc.status
            text = await site.run(lambda: site.render(
                "error.html", message=message, status=status, session=None,
                signed_in="", csrf=""))
            response = answer(text, status, private=True)
        timing = getattr(request.state, "timing", None)
        response.headers["Server-Timing"] = (
            timing if isinstance(timing, Timing) else Timing(how="miss")
        ).header(time.perf_counter() - began)
        return response
    return wrapped


def mount_pages(app: Starlette, state: CompetitionHost) -> None:
    """Add the pages and their static files to ``app``."""
    site = Site(state)
    app.state.pages = site
    for path, handler, method in ROUTES:
        app.router.routes.append(Route(path, _shown(handler), methods=[method]))
    app.router.routes.append(Mount("/finals/report", finals.report_files(state.workspace),
                                   name="finals-report"))
    app.router.routes.append(Mount("/static", StaticFiles(
        packages=[("referee.server.pages", "static")]), name="static"))
