"""The organizer's page: participants (add one, disable one, enable one again), every
submission, the ladder (pause, resume), closing submissions, ending the season (its
seed published, and how to check every deal against it), starting the finals and their
progress, and how the ladder goes: games and forfeits a minute, the machine's load.
Disabling a participant, ending the season and starting the finals ask for a tick in a
confirmation box (checked here too, not only by the browser): none is undone by a
click."""

from __future__ import annotations

import os
from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from referee.competition import CompetitionError, FinalsPlan, Refused, finals_db, played_games
from referee.server.pages.forms import checked_form
from referee.server.pages.public import site_of
from referee.server.pages.sessions import Role, Session
from referee.server.pages.site import PageError, Site

__all__ = ["add_participant", "disable_participant", "enable_participant", "end_season",
           "freeze", "ladder", "organizer_page", "start_finals"]

#: Submissions the page lists (the newest).
SUBMISSIONS_SHOWN = 200
#: The finals' deals and table size when the form leaves them out (as ``finals``).
DEFAULT_DEALS = 10
DEFAULT_TABLE_SIZE = 2


async def organizer_session(site: Site, request: Request) -> Session:
    session = await site.sessions.of(request)
    if session is None:
        raise PageError(401, "sign in with the organizer's token first")
    if session.role is not Role.ORGANIZER:
        raise PageError(403, "this page is the organizer's")
    return session


async def organizer_page(request: Request, *, problem: str = "", added: str = "",
                         token: str = "", status: int = 200) -> Response:
    site = site_of(request)
    session = await organizer_session(site, request)
    await site.refresh()
    store = site.state.store

    def read() -> tuple[Any, Any, bool, int, int]:
        return (store.participants(), store.submissions()[:SUBMISSIONS_SHOWN],
                store.frozen(), len(store.finalists()), played_games(finals_db(store.path)))

    people, subs, frozen, finalists, played = await trio.to_thread.run_sync(read)
    paused = site.state.paused()
    finals = site.state.finals

    def build() -> dict[str, Any]:  # under the digest's lock, in a worker thread
        games, forfeits = site.digest.per_minute()
        return {"people": people, "subs": subs, "frozen": frozen, "paused": paused,
                "games_per_minute": games, "forfeits_per_minute": forfeits,
                "load": os.getloadavg(), "cpus": os.cpu_count() or 1,
                "stored": site.digest.stored, "problem": problem, "added": added,
                "token": token, "finals": finals, "finals_played": played,
                "finalists": finalists, "logs": site.state.logs,
                "logs_mb": site.state.config.competition.logs_mb,
                "season": site.state.season_json()}

    return await site.page(request, "organizer.html", build, session=session,
                           status=status)


async def add_participant(request: Request) -> Response:
    """Add a participant; their token is shown once, on the answer to the form."""
    site = site_of(request)
    session = await organizer_session(site, request)
    form = await checked_form(request, session.csrf)
    name = str(form.get("name", "")).strip()
    try:
        token = await trio.to_thread.run_sync(site.state.store.add_participant, name)
    except CompetitionError as exc:
        return await organizer_page(request, problem=str(exc), status=400)
    return await organizer_page(request, added=name, token=token)


def _confirmed(form: Any, what: str) -> None:
    """A form that changes what cannot be undone by a click carries its ticked box."""
    if form.get("confirm") != "yes":
        raise ValueError(f"tick the box to confirm {what}")


async def disable_participant(request: Request) -> Response:
    site = site_of(request)
    session = await organizer_session(site, request)
    form = await checked_form(request, session.csrf)
    name = str(form.get("name", ""))
    try:
        _confirmed(form, f"that {name} is disabled")
        await trio.to_thread.run_sync(site.state.store.disable_participant, name)
    except (ValueError, CompetitionError) as exc:
        return await organizer_page(request, problem=str(exc), status=400)
    site.state.wake_pipeline()
    return RedirectResponse("/organizer", status_code=303)


async def enable_participant(request: Request) -> Response:
    """Enable a disabled participant again (``taki-referee participants enable``)."""
    site = site_of(request)
    session = await organizer_session(site, request)
    form = await checked_form(request, session.csrf)
    try:
        await trio.to_thread.run_sync(site.state.store.enable_participant,
                                      str(form.get("name", "")))
    except CompetitionError as exc:
        return await organizer_page(request, problem=str(exc), status=400)
    site.state.wake_pipeline()
    return RedirectResponse("/organizer", status_code=303)


async def ladder(request: Request) -> Response:
    """Pause or resume the ladder (held across restarts)."""
    site = site_of(request)
    session = await organizer_session(site, request)
    form = await checked_form(request, session.csrf)
    action = form.get("action")
    if action not in ("pause", "resume"):
        raise PageError(400, "the ladder can be paused or resumed")
    try:
        await site.state.set_paused(action == "pause")
    except Refused as exc:
        return await organizer_page(request, problem=exc.message, status=409)
    return RedirectResponse("/organizer", status_code=303)


async def freeze(request: Request) -> Response:
    """Close submissions for the finals (``taki-referee finals`` plays them)."""
    site = site_of(request)
    session = await organizer_session(site, request)
    await checked_form(request, session.csrf)
    await trio.to_thread.run_sync(site.state.store.freeze)
    return RedirectResponse("/organizer", status_code=303)


async def end_season(request: Request) -> Response:
    """End the season (as ``POST /api/season/end``): the ladder stops for good,
    submissions close, and the season's seed and salt are published."""
    site = site_of(request)
    session = await organizer_session(site, request)
    form = await checked_form(request, session.csrf)
    try:
        _confirmed(form, "that the season ends (the ladder stops for good, submissions"
                   " close, the seed is published)")
    except ValueError as exc:
        return await organizer_page(request, problem=str(exc), status=400)
    await site.state.end_season()
    return RedirectResponse("/organizer#season", status_code=303)


def _number(raw: object, default: int) -> int:
    text = str(raw if raw is not None else "").strip()
    if not text:
        return default
    if not text.isdigit() or len(text) > 6:
        raise ValueError(f"{text[:20]!r} is not a whole number")
    return int(text)


async def start_finals(request: Request) -> Response:
    """Close submissions, pause the ladder and play the finals in the server (as
    ``taki-referee finals`` would): each participant's latest bot, ``deals`` deals a
    table of ``table_size``."""
    site = site_of(request)
    session = await organizer_session(site, request)
    form = await checked_form(request, session.csrf)
    store = site.state.store
    try:
        _confirmed(form, "that the finals start (submissions close, the ladder stops)")
        deals = _number(form.get("deals"), DEFAULT_DEALS)
        table_size = _number(form.get("table_size"), DEFAULT_TABLE_SIZE)
        finalists = await trio.to_thread.run_sync(store.finalists)
        plan = FinalsPlan(tuple(str(s.entrant) for s in finalists), deals, table_size)
        await site.state.begin_finals(plan)
    except (ValueError, CompetitionError) as exc:
        return await organizer_page(request, problem=str(exc), status=400)
    return RedirectResponse("/organizer", status_code=303)
