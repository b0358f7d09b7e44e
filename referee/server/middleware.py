"""The ASGI middleware around every answer of the server: its security headers, a
rate limit on the requests of each anonymous client, and the end of requests answered
before their body was read.

Headers: every response gets ``X-Content-Type-Options``, ``Referrer-Policy``,
``X-Frame-Options`` and a ``Content-Security-Policy`` (the one a page set, else
:data:`DEFAULT_POLICY`, which lets a self-contained document such as the finals'
report show itself and fetch nothing), whoever made it: a page, the JSON API, a static
file, an error.

Rate limit: each client address has a token bucket of ``burst`` requests, refilled at
``rate`` a second; a request without an ``Authorization`` header (the pages, the
public API) takes a token or is answered 429 with a ``Retry-After``, before any work
is done for it, and after :data:`TARPIT_S` (a flood waits for its answers). Requests
with a token are the participants' and the organizer's: they are counted by the upload
limits instead (whose 429 comes after the same wait).

Unread bodies: a request refused before its body was read (an upload over a limit, too
large, without a token) is answered at once and its connection closed; its body is
never read (a 1 MiB upload refused costs the server its headers and the few chunks
Hypercorn had queued for it, :data:`QUEUED_MESSAGES`). Hypercorn closes such a
connection only once its request's queue takes the disconnect message: after the
answer, :class:`UnreadBodies` empties that queue (a task of its own, at most
:data:`DRAIN_S`) until the disconnect comes, so neither the connection nor its task
is left waiting on a queue nobody reads.
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import attrs
import trio
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["DEFAULT_POLICY", "DRAIN_S", "QUEUED_MESSAGES", "TARPIT_S", "RateLimit",
           "SecurityHeaders", "TokenBuckets", "UnreadBodies", "edit_headers", "security_headers"]

#: For a response that set no policy of its own.
DEFAULT_POLICY: Final = ("default-src 'none'; script-src 'unsafe-inline';"
                         " style-src 'unsafe-inline'; img-src 'self' data:;"
                         " base-uri 'none'; form-action 'none'; frame-ancestors 'self'")
_HEADERS: Final = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "SAMEORIGIN",
    "Content-Security-Policy": DEFAULT_POLICY,
}
#: Client addresses remembered at most (the least recently seen are forgotten first).
MAX_CLIENTS: Final = 10_000
#: A request refused for coming too often is answered after this long: the client's
#: connection waits (a sleeping task costs the server nothing), so a flood of
#: back-to-back requests slows to what the server can refuse for free.
TARPIT_S: Final = 2.0
#: The messages of a request's body Hypercorn queues for the application before it
#: stops reading the connection (its ``max_app_queue_size``): a chunk being read, the
#: end of the body, and the disconnect of a request whose body nobody read.
QUEUED_MESSAGES: Final = 2
#: The longest a refused request's queue is emptied after its answer.
DRAIN_S: Final = 30.0


def security_headers(headers: MutableHeaders) -> None:
    """Add the security headers a response lacks."""
    for name, value in _HEADERS.items():
        headers.setdefault(name, value)


async def edit_headers(app: ASGIApp, scope: Scope, receive: Receive, send: Send,
                       edit: Callable[[MutableHeaders], None]) -> None:
    """Run ``app`` on an HTTP request, letting ``edit`` change its response's headers
    as they go out."""

    async def edited(message: Message) -> None:
        if message["type"] == "http.response.start":
            edit(MutableHeaders(scope=message))
        await send(message)

    await app(scope, receive, edited)


class SecurityHeaders:
    """Adds the security headers to every HTTP response of ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await edit_headers(self.app, scope, receive, send, security_headers)


@attrs.define
class TokenBuckets:
    """A token bucket per key: ``burst`` tokens, ``rate`` more each second. Pure but for
    the clock, which tests replace."""

    rate: float
    burst: float
    clock: Callable[[], float] = time.monotonic
    _buckets: OrderedDict[str, tuple[float, float]] = attrs.field(factory=OrderedDict)

    def take(self, key: str) -> float:
        """Take a token of ``key``'s bucket: 0, or the seconds until one is there."""
        now = self.clock()
        tokens, then = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / self.rate
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > MAX_CLIENTS:
            self._buckets.popitem(last=False)
        return wait


class RateLimit:
    """Answers 429 to an anonymous client over its rate, before ``app`` sees the request."""

    def __init__(self, app: ASGIApp, buckets: TokenBuckets) -> None:
        self.app = app
        self.buckets = buckets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not any(
                name == b"authorization" for name, _ in scope["headers"]):
            client = scope.get("client")
            wait = self.buckets.take(client[0] if client else "")
            if wait > 0:
                await trio.sleep(TARPIT_S)
                await _too_many(send, wait)
                return
        await self.app(scope, receive, send)


async def _too_many(send: Send, wait: float) -> None:
    body = json.dumps({"error": "too many requests from your address: slow down"}).encode()
    await send({"type": "http.response.start", "status": 429, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(max(1, math.ceil(wait))).encode())]})
    await send({"type": "http.response.body", "body": body})


class UnreadBodies:
    """When ``app`` ends its answer to a request whose body it did not read to the end,
    empties the request's queue until the server's disconnect message (a task of its
    own, at most :data:`DRAIN_S`): Hypercorn puts that message in the queue as the
    answer ends, and closes the connection only once it is in, so without this the
    connection and its reading task would wait on a full queue for good."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope):
            await self.app(scope, receive, send)
            return
        ended = False

        async def watched() -> Message:
            nonlocal ended
            message = await receive()
            if message["type"] == "http.disconnect" or not message.get("more_body"):
                ended = True
            return message

        async def answered(message: Message) -> None:
            nonlocal ended
            if (message["type"] == "http.response.body" and not message.get("more_body")
                    and not ended):
                ended = True
                trio.lowlevel.spawn_system_task(_drain, receive, name="drain unread body")
            await send(message)

        await self.app(scope, watched, answered)


def _has_body(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"transfer-encoding" or (name == b"content-length" and value != b"0"):
            return True
    return False


async def _drain(receive: Receive) -> None:
    """Take the queued messages of a request until its disconnect (a system task: it
    must not raise)."""
    with trio.move_on_after(DRAIN_S):
        try:
            while (await receive())["type"] != "http.disconnect":
                pass
        except Exception:
            return
