"""The pages everybody sees: the live leaderboard and crosstable, the bot pages, the
game pages with the replay viewer and the replay's JSON to download; and, on a game's
page, the stderr logs of the signed-in participant's own bots, to read or download
(403 for anyone else's)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from referee.core import ReplayError
from referee.server.pages.board import (
    GameFilter,
    board_page_of,
    board_values,
    bot_values,
    crosstable_html,
)
from referee.server.pages.digest import GameLine, SeatLine
from referee.server.pages.kept import entity_tag
from referee.server.pages.logs import game_logs, log_download, public_replay, public_viewer
from referee.server.pages.sessions import Role, Session
from referee.server.pages.site import (
    PageError,
    Site,
    answer,
    matches,
    not_modified,
    secure_headers,
)

__all__ = ["board", "board_rows", "bot_page", "game_log", "game_log_download", "game_page",
           "game_replay", "game_viewer"]

#: The viewer page's scripts and styles are inline (it is a self-contained file).
VIEWER_POLICY: Final = ("default-src 'none'; script-src 'unsafe-inline';"
                        " style-src 'unsafe-inline'; img-src data:; base-uri 'none';"
                        " form-action 'none'; frame-ancestors 'self'")
#: Viewer pages kept rendered.
VIEWERS_KEPT: Final = 32
#: A stored game's replay and viewer never change: browsers may keep them this long.
REPLAY_CACHE: Final = "public, max-age=86400, immutable"


def site_of(request: Request) -> Site:
    site: Site = request.app.state.pages
    return site


def _page(request: Request) -> int:
    raw = request.query_params.get("page", "")
    return int(raw) if raw.isdigit() and len(raw) < 7 else 1


def _board(site: Site, page: int) -> dict[str, Any]:
    values = board_values(site, page)
    return {**values, "crosstable_html": crosstable_html(site, values["rows"], values["pages"])}


async def board(request: Request) -> Response:
    """A page of the leaderboard (``?page=N``); ``?bot=NAME`` goes to the page of the
    bot ``NAME``."""
    site = site_of(request)
    await site.refresh()
    wanted = request.query_params.get("bot", "")[:200]
    if wanted:
        page = await site.locked(lambda: board_page_of(site, wanted))
        if page is None:
            raise PageError(404, f"no bot named {wanted!r} in the ladder")
        return RedirectResponse(f"/?page={page}" if page > 1 else "/", status_code=303)
    session = await site.sessions.of(request)
    page = _page(request)
    return await site.page(request, "board.html", lambda: {
        **_board(site, page), "season": site.state.season_json()}, session=session,
        keep=site.state.season_ended is None)  # the season's end changes no game


async def board_rows(request: Request) -> Response:
    site = site_of(request)
    await site.refresh()
    page = _page(request)
    return await site.fragment(request, "board_rows.html", lambda: board_values(site, page))


def _filter(request: Request) -> GameFilter:
    query = request.query_params

    def number(key: str) -> int:
        raw = query.get(key, "")
        return int(raw) if raw.isdigit() and len(raw) < 7 else 0

    result = query.get("result", "")
    return GameFilter(opponent=query.get("opponent", "")[:100], size=number("size"),
                      result=result if result in GameFilter.RESULTS else "",
                      page=number("page") or 1)


async def bot_page(request: Request) -> Response:
    site = site_of(request)
    await site.refresh()
    bot = request.path_params["bot"]
    wanted = _filter(request)

    def build() -> dict[str, Any]:
        values = bot_values(site, bot, wanted)
        if values is None:
            raise PageError(404, f"no bot named {bot!r}")
        return values

    return await site.page(request, "bot.html", build, session=await site.sessions.of(request))


def _game(site: Site, number: int) -> GameLine:
    game = site.digest.stored_games.game(number) if number >= 1 else None
    if game is None:
        raise PageError(404, f"no game {number}")
    return game


def _owned(site: Site, session: Session | None, game: GameLine) -> list[int]:
    """The seats of ``game`` whose bot belongs to the signed-in participant."""
    if session is None or session.role is not Role.PARTICIPANT:
        return []
    return [s.seat for s in game.seats
            if (sub := site.entrants.get(s.bot)) is not None
            and sub.participant == session.name]


async def game_page(request: Request) -> Response:
    site = site_of(request)
    await site.refresh()
    session = await site.sessions.of(request)
    number = request.path_params["number"]

    def build() -> dict[str, Any]:
        game = _game(site, number)
        return {"game": game, "own": _owned(site, session, game),
                "owners": {s.bot: getattr(site.entrants.get(s.bot), "participant", None)
                           for s in game.seats}}

    return await site.page(request, "game.html", build, session=session, stored=True,
                           locked=False)


async def _own_seat(request: Request) -> tuple[Site, Session, GameLine, SeatLine]:
    """The game and seat of a log request, when the seat's bot is the signed-in
    participant's (PageError 404 or 403 otherwise)."""
    site = site_of(request)
    await site.refresh()
    session = await site.sessions.of(request)
    number, seat = request.path_params["number"], request.path_params["seat"]
    game: GameLine = await site.run(lambda: _game(site, number))
    line = next((s for s in game.seats if s.seat == seat), None)
    if line is None:
        raise PageError(404, f"game {number} has no seat {seat}")
    if session is None:
        raise PageError(403, "sign in with your participant token to see your bots' logs")
    if seat not in _owned(site, session, game):
        raise PageError(403, "this log belongs to another participant's bot")
    return site, session, game, line


async def game_log(request: Request) -> Response:
    """A seat's stderr log of a game: its owner's alone."""
    site, session, game, line = await _own_seat(request)
    log_dir = site.state.workspace.root / "logs"

    def build() -> dict[str, Any]:
        meetings = site.meetings(game.block)
        return {"game": game, "seat": line,
                "parts": game_logs(log_dir, meetings, game.block, game.game_id, line.bot)}

    return await site.page(request, "log.html", build, session=session)


async def game_log_download(request: Request) -> Response:
    """A seat's whole stderr log of a game, as a text file: its owner's alone."""
    site, _, game, line = await _own_seat(request)
    log_dir = site.state.workspace.root / "logs"
    data: bytes = await site.run(lambda: log_download(log_dir, site.meetings(game.block),
                                                      game.block,
                                                      game.game_id, line.bot))
    response = Response(data, media_type="text/plain; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="game{game.number}-seat{line.seat}.log"',
        "Cache-Control": "no-store"})
    secure_headers(response, VIEWER_POLICY)
    return response


async def _replayed_game(request: Request) -> tuple[Site, GameLine, str]:
    """The site, the game the request names and its stored replay; PageError 404 for a
    game without one."""
    site = site_of(request)
    await site.refresh()
    number = request.path_params["number"]
    game: GameLine = await site.run(lambda: _game(site, number))
    if game.replay is None:
        raise PageError(404, f"game {game.number} has no replay")
    return site, game, game.replay


async def game_replay(request: Request) -> Response:
    """A game's replay as JSON (the format of ``taki-referee replay``), every forfeit's
    detail cut to its first line as on the viewer."""
    site, game, stored = await _replayed_game(request)
    db = site.state.store.path
    try:
        wire = await site.run(lambda: public_replay(stored, db).to_wire())
    except (ReplayError, OSError) as exc:
        raise PageError(404, f"the replay of game {game.number} cannot be read: {exc}"
                        ) from None
    response = JSONResponse(wire, headers={
        "Content-Disposition": f'attachment; filename="game{game.number}.json"',
        "Cache-Control": REPLAY_CACHE})
    secure_headers(response, VIEWER_POLICY)
    return response


@functools.lru_cache(maxsize=VIEWERS_KEPT)
def _viewer(stored: str, db: str) -> tuple[str, str]:
    """A game's viewer page, and its ETag."""
    text = public_viewer(stored, Path(db))
    return text, entity_tag(text)


async def game_viewer(request: Request) -> Response:
    site, game, stored = await _replayed_game(request)
    db = str(site.state.store.path)
    try:
        text, tag = await site.run(lambda: _viewer(stored, db))
    except (ReplayError, OSError) as exc:
        raise PageError(404, f"the replay of game {game.number} cannot be shown: {exc}"
                        ) from None
    response = not_modified(tag, REPLAY_CACHE) if matches(request, tag) else answer(text)
    response.headers["ETag"] = tag
    response.headers["Cache-Control"] = REPLAY_CACHE
    secure_headers(response, VIEWER_POLICY)
    return response
