"""The competition's HTTP API: a Starlette application, served by Hypercorn's trio worker
in the same trio run as the ladder (:mod:`referee.server.serve`).

Every answer is JSON. A refused request gets its HTTP status and ``{"error": "..."}``
with a one-line message; tokens travel only in the ``Authorization: Bearer`` header,
never in a URL, and are never logged. Everything that blocks (SQLite, unpacking,
hashing) runs in a thread, so the ladder's clocks on the same event loop never wait.

The pages (templates served by the same application) are added beside these routes.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Final

import trio
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message

from referee.competition import (
    CompetitionHost,
    Participant,
    Refusal,
    Refused,
    check_upload_key,
    digests_match,
)
from referee.server.loop_watch import ArrivalStamps
from referee.server.middleware import (
    TARPIT_S,
    RateLimit,
    SecurityHeaders,
    TokenBuckets,
    UnreadBodies,
    security_headers,
)
from referee.server.pages import mount_pages

__all__ = ["STATUS", "build_app"]

#: The HTTP status of each refusal.
STATUS: Final[dict[Refusal, int]] = {
    Refusal.UNAUTHENTICATED: 401,
    Refusal.FORBIDDEN: 403,
    Refusal.NOT_FOUND: 404,
    Refusal.TOO_LARGE: 413,
    Refusal.BAD_UPLOAD: 400,
    Refusal.TOO_MANY: 429,
    Refusal.FROZEN: 409,
    Refusal.NO_SPACE: 507,
    Refusal.BUSY: 503,
}
#: The seconds a 503 (the server busy with other uploads) asks a client to wait.
BUSY_RETRY_S: Final = 5
#: The form field of an upload sent as ``multipart/form-data``.
ARCHIVE_FIELD: Final = "archive"
#: The header that names an upload, so that a retry of it returns the first one's
#: submission instead of making another (``taki-referee submit`` sends a new random key
#: each time it runs, and the same key with each retry).
KEY_HEADER: Final = "Idempotency-Key"
_CHUNK: Final = 1 << 16

Handler = Callable[[Request], Awaitable[Response]]

log = logging.getLogger("referee.server")


def error(status: int, message: str) -> JSONResponse:
    headers = ({"WWW-Authenticate": "Bearer"} if status == 401
               else {"Retry-After": str(BUSY_RETRY_S)} if status == 503 else None)
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _bearer(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Refused(Refusal.UNAUTHENTICATED,
                      "missing token: send it as the header 'Authorization: Bearer TOKEN'")
    return token.strip()


def _state(request: Request) -> CompetitionHost:
    state: CompetitionHost = request.app.state.competition
    return state


async def _participant(request: Request) -> Participant:
    token = _bearer(request)
    return await trio.to_thread.run_sync(_state(request).store.authenticate, token)


def _organizer(request: Request) -> None:
    if not digests_match(_bearer(request), _state(request).organizer_digest):
        raise Refused(Refusal.FORBIDDEN, "this needs the organizer's token")


async def competition(request: Request) -> Response:
    state = _state(request)
    frozen = await trio.to_thread.run_sync(state.store.frozen)
    config = state.config
    return JSONResponse({
        "name": config.competition.name, "rules": config.competition.rules,
        "table_sizes": list(config.ladder.table_sizes), "frozen": frozen,
        "paused": state.paused(), "disk_full": state.disk_full,
        "limits": {"max_upload_mb": config.submissions.max_upload_mb,
                   "per_day": config.submissions.per_day,
                   "active_bots": config.submissions.active_bots},
        "season": state.season_json(),
    })


#: What a form adds to the file it carries (its boundaries and part headers), at most.
FORM_OVERHEAD: Final = 1 << 16


def _bounded(request: Request, limit: int, too_large: Refused) -> Request:
    """The request, whose body raises ``too_large`` as soon as more than ``limit`` bytes
    of it came, with or without a Content-Length: nothing beyond is read or kept."""
    received = 0

    async def receive() -> Message:
        nonlocal received
        message = await request.receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise too_large
        return message

    return Request(request.scope, receive)


async def _receive(request: Request, limit: int) -> Path:
    """The request's archive, written to a new file of ``incoming``; Refused when it
    is larger than ``limit`` bytes (the rest is not read)."""
    too_large = Refused(Refusal.TOO_LARGE, f"the upload is larger than {limit >> 20} MiB")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + FORM_OVERHEAD:
        raise too_large
    request = _bounded(request, limit + FORM_OVERHEAD, too_large)
    path = trio.Path(_state(request).workspace.incoming / f"{secrets.token_hex(16)}.upload")
    received = 0
    try:
        async with await trio.open_file(path, "xb") as out:
            if request.headers.get("content-type", "").startswith("multipart/form-data"):
                chunks = _form_file(request, limit)
            else:
                chunks = request.stream()
            async for chunk in chunks:
                received += len(chunk)
                if received > limit:
                    raise too_large
                await out.write(chunk)
        if received == 0:
            raise Refused(Refusal.BAD_UPLOAD, "the upload is empty")
    except BaseException:
        await path.unlink(missing_ok=True)
        raise
    return Path(path)


async def _form_file(request: Request, limit: int) -> AsyncIterator[bytes]:
    """The chunks of the form's archive field."""
    async with request.form(max_files=1, max_fields=4, max_part_size=limit) as form:
        part = form.get(ARCHIVE_FIELD)
        if not isinstance(part, UploadFile):
            raise Refused(Refusal.BAD_UPLOAD,
                          f"the form has no file field named {ARCHIVE_FIELD!r}")
        while chunk := await part.read(_CHUNK):
            yield chunk


async def submit(request: Request) -> Response:
    """Receive an upload and queue it (202), or, for a retry of an upload already
    received (the same participant and idempotency key), answer with that upload's
    submission (200). Every limit is checked before the body is read."""
    state = _state(request)
    participant = await _participant(request)
    key = request.headers.get(KEY_HEADER)
    check_upload_key(key, f"the header {KEY_HEADER}")  # before the body is read
    limit = state.config.submissions.max_upload_mb << 20
    async with state.uploads.admit(participant.name, key) as earlier:
        if earlier is None:
            archive = await _receive(request, limit)
            accepted = await state.uploads.accept(participant.name, archive, key)
        else:
            accepted = earlier
    sub = accepted.submission
    if accepted.new:
        state.wake_pipeline()
    return JSONResponse({"submission": sub.to_json()}, status_code=202 if accepted.new else 200,
                        headers={"Location": f"/api/submissions/{sub.id}"})


async def my_submissions(request: Request) -> Response:
    state = _state(request)
    participant = await _participant(request)
    subs = await trio.to_thread.run_sync(state.store.submissions, participant.name)
    return JSONResponse({"submissions": [s.to_json() for s in subs]})


async def one_submission(request: Request) -> Response:
    state = _state(request)
    participant = await _participant(request)
    raw = request.path_params["id"]
    sub = await trio.to_thread.run_sync(state.store.submission, raw)
    if sub.participant != participant.name:
        raise Refused(Refusal.FORBIDDEN, f"submission {raw} belongs to another participant")
    return JSONResponse({"submission": sub.to_json()})


async def bots(request: Request) -> Response:
    """The active bots, and the ladder's latest ratings of every bot."""
    state = _state(request)
    active = await trio.to_thread.run_sync(state.store.active)
    return JSONResponse({
        "active": [{"bot": s.entrant, "participant": s.participant} for s in active],
        "ratings": state.ratings(),
    })


async def participants(request: Request) -> Response:
    _organizer(request)
    people = await trio.to_thread.run_sync(_state(request).store.participants)
    return JSONResponse({"participants": [
        {"name": p.name, "disabled": p.disabled, "created_at": p.created_at} for p in people]})


async def pause(request: Request) -> Response:
    _organizer(request)
    await _state(request).set_paused(True)
    return JSONResponse({"paused": True})


async def resume(request: Request) -> Response:
    _organizer(request)
    await _state(request).set_paused(False)
    return JSONResponse({"paused": False})


async def end_season(request: Request) -> Response:
    """The organizer ends the season: the ladder pauses for good, and the season's seed
    and salt are published (``GET /api/competition``)."""
    _organizer(request)
    state = _state(request)
    await state.end_season()
    return JSONResponse({"season": state.season_json()})


def _refusals(handler: Handler) -> Handler:
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except Refused as exc:
            if exc.refusal in (Refusal.TOO_MANY, Refusal.BUSY):  # its flood waits (a tarpit)
                await trio.sleep(TARPIT_S)
            return error(STATUS[exc.refusal], exc.message)
    return wrapped


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error(exc.status_code, str(exc.detail))


async def _disconnected(request: Request, _exc: Exception) -> Response:
    """A client gone in the middle of its request (an upload cut short): one line in the
    log, and an answer nobody reads."""
    log.warning("%s %s: the client disconnected before the end of its request",
                request.method, request.url.path)
    return error(400, "the request ended before its end")


async def _internal_error(_request: Request, _exc: Exception) -> Response:
    response = error(500, "internal error of the server (its log says more)")
    security_headers(response.headers)  # made outside the middleware
    return response


def build_app(state: CompetitionHost, *, timing: bool = False) -> Starlette:
    """The application; with ``timing``, every answer tells when its request arrived
    (:class:`referee.server.loop_watch.ArrivalStamps`)."""
    routes: list[tuple[str, Handler, list[str]]] = [
        ("/api/competition", competition, ["GET"]),
        ("/api/submissions", submit, ["POST"]),
        ("/api/submissions", my_submissions, ["GET"]),
        ("/api/submissions/{id:int}", one_submission, ["GET"]),
        ("/api/bots", bots, ["GET"]),
        ("/api/participants", participants, ["GET"]),
        ("/api/ladder/pause", pause, ["POST"]),
        ("/api/ladder/resume", resume, ["POST"]),
        ("/api/season/end", end_season, ["POST"]),
    ]
    handlers: dict[int | type[Exception], Any] = {
        HTTPException: _http_error, ClientDisconnect: _disconnected,
        Exception: _internal_error}
    section = state.config.competition
    buckets = TokenBuckets(section.requests_per_second, section.request_burst)
    app = Starlette(
        routes=[Route(path, _refusals(handler), methods=methods)
                for path, handler, methods in routes],
        exception_handlers=handlers,
        middleware=[*([Middleware(ArrivalStamps)] if timing else []),
                    Middleware(SecurityHeaders), Middleware(UnreadBodies),
                    Middleware(RateLimit, buckets=buckets)],
    )
    app.state.competition = state
    # The HTML pages (referee.server.pages), beside the API.
    mount_pages(app, state)
    return app
