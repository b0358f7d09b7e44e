"""The ASGI middleware around every answer of the server: its security headers, and a
rate limit on the requests of each anonymous client.

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

__all__ = ["DEFAULT_POLICY", "TARPIT_S", "RateLimit", "SecurityHeaders", "TokenBuckets",
           "security_headers"]

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


def security_headers(headers: MutableHeaders) -> None:
    """Add the security headers a response lacks."""
    for name, value in _HEADERS.items():
        headers.setdefault(name, value)


class SecurityHeaders:
    """Adds the security headers to every HTTP response of ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                security_headers(MutableHeaders(scope=message))
            await send(message)

        await self.app(scope, receive, with_headers)


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
