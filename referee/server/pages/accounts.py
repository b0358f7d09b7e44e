"""Signing in and out, and a participant's own page: their submissions with their status
(the failing step and its output when rejected), the upload form and token rotation."""

from __future__ import annotations

from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from referee.competition import Refused, digest, digests_match, new_upload_key
from referee.server.pages.board import recent_values
from referee.server.pages.forms import checked_form, save_archive
from referee.server.pages.public import site_of
from referee.server.pages.sessions import (
    SESSION_COOKIE,
    VISITOR_COOKIE,
    Role,
    Session,
    set_cookie,
    visitor_csrf,
)
from referee.server.pages.site import PageError, Site

__all__ = ["my_page", "my_submissions", "rotate_token", "sign_in", "sign_in_form",
           "sign_out", "upload"]

#: The most of a submission's output a page shows (its end).
OUTPUT_CHARS = 20_000
#: The newest submissions whose output the page shows (the API has every one's).
OUTPUTS_SHOWN = 10


def _see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


async def sign_in_form(request: Request) -> Response:
    site = site_of(request)
    session = await site.sessions.of(request)
    if session is not None:
        return _see_other("/organizer" if session.role is Role.ORGANIZER else "/me")
    return await site.page(request, "signin.html", lambda: {"problem": ""}, form=True)


async def sign_in(request: Request) -> Response:
    site = site_of(request)
    csrf, _ = visitor_csrf(request)
    if VISITOR_COOKIE not in request.cookies:
        raise PageError(403, "the form is out of date or from another site: reload the page"
                        " and send it again")
    form = await checked_form(request, csrf)
    token = str(form.get("token", "")).strip()
    state = site.state
    if token and digests_match(token, state.organizer_digest):
        session = await site.sessions.start(Role.ORGANIZER, "", state.organizer_digest)
        target = "/organizer"
    else:
        try:
            participant = await trio.to_thread.run_sync(state.store.authenticate, token)
        except Refused as exc:
            message = exc.message
            return await site.page(request, "signin.html", lambda: {"problem": message},
                                   status=401, form=True)
        session = await site.sessions.start(Role.PARTICIPANT, participant.name,
                                            digest(token))
        target = "/me"
    response = _see_other(target)
    set_cookie(response, request, SESSION_COOKIE, session.key)
    return response


async def sign_out(request: Request) -> Response:
    site = site_of(request)
    session = await site.sessions.of(request)
    if session is not None:
        await checked_form(request, session.csrf)
        await site.sessions.end(session)
    response = _see_other("/")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


async def _signed_participant(site: Site, request: Request) -> Session:
    """The signed-in participant's session; PageError otherwise."""
    session = await site.sessions.of(request)
    if session is None:
        raise PageError(401, "sign in with your participant token first")
    if session.role is not Role.PARTICIPANT:
        raise PageError(403, "this page is a participant's")
    return session


def _disabled(site: Site, name: str) -> bool:
    """Whether the organizer disabled participant ``name`` (blocking)."""
    return any(p.disabled for p in site.state.store.participants(name))


async def _refused(site: Site, session: Session) -> PageError:
    """A disabled participant's session ends."""
    await site.sessions.end(session)
    return PageError(403, f"participant {session.name} is disabled")


async def participant_session(site: Site, request: Request) -> Session:
    """The signed-in participant's session; PageError otherwise (and once the organizer
    disabled them)."""
    session = await _signed_participant(site, request)
    if await trio.to_thread.run_sync(_disabled, site, session.name):
        raise await _refused(site, session)
    return session


def _submissions_of(site: Site, name: str) -> list[dict[str, Any]]:
    """A participant's submissions as their page shows them (blocking)."""
    subs = site.state.store.submissions(name)
    return [{"sub": s, "output": s.output[-OUTPUT_CHARS:] if i < OUTPUTS_SHOWN else "",
             "cut": max(0, len(s.output) - OUTPUT_CHARS)} for i, s in enumerate(subs)]


async def _submissions(site: Site, name: str) -> list[dict[str, Any]]:
    return await trio.to_thread.run_sync(_submissions_of, site, name)


async def my_page(request: Request, *, problem: str = "", token: str = "",
                  status: int = 200) -> Response:
    site = site_of(request)
    session = await _signed_participant(site, request)
    store = site.state.store
    # What the page reads of the submissions, in one worker thread.
    disabled, subs, frozen = await trio.to_thread.run_sync(lambda: (
        _disabled(site, session.name), _submissions_of(site, session.name), store.frozen()))
    if disabled:
        raise await _refused(site, session)
    limits = site.state.config.submissions
    await site.refresh()
    return await site.page(request, "me.html", lambda: {
        **recent_values(site, session.name),
        "subs": subs, "limits": limits, "frozen": frozen, "problem": problem,
        "token": token, "upload_key": new_upload_key()}, session=session, status=status,
        locked=False)


async def my_submissions(request: Request) -> Response:
    site = site_of(request)
    session = await participant_session(site, request)
    subs = await _submissions(site, session.name)
    return await site.fragment(request, "submissions.html", lambda: {"subs": subs},
                               private=True)


#: The upload form's idempotency key: a fresh one with each rendering of the form, so
#: that the same form sent twice (a double click, a resend after the server restarted)
#: makes one submission.
UPLOAD_KEY_FIELD = "upload_key"


async def upload(request: Request) -> Response:
    site = site_of(request)
    session = await participant_session(site, request)
    state = site.state
    limit = state.config.submissions.max_upload_mb << 20
    form = await checked_form(request, session.csrf, upload_limit=limit)
    key = form.get(UPLOAD_KEY_FIELD)
    try:
        archive = await save_archive(form, state.workspace.incoming, limit)
    finally:
        await form.close()
    upload_key = key if isinstance(key, str) else None
    try:
        async with state.uploads.admit(session.name, upload_key) as earlier:
            if earlier is None:
                accepted = await state.uploads.accept(session.name, archive, upload_key)
            else:  # the same form, sent again
                archive.unlink(missing_ok=True)
                accepted = earlier
    except Refused as exc:
        archive.unlink(missing_ok=True)
        return await my_page(request, problem=exc.message, status=400)
    if accepted.new:
        state.wake_pipeline()
    return _see_other("/me")


async def rotate_token(request: Request) -> Response:
    """A new token, shown once on the answer to the form (never in a URL)."""
    site = site_of(request)
    session = await participant_session(site, request)
    await checked_form(request, session.csrf)
    try:
        token = await trio.to_thread.run_sync(site.state.store.rotate_token, session.name)
    except Refused as exc:
        raise PageError(403, exc.message) from None
    await site.sessions.rotated(session, digest(token))
    return await my_page(request, token=token)
