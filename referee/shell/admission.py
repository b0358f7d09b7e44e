"""Who may knock: the rate limit on new connections, the refusals log, and reading a new
connection's ``bot_hello`` within its time and size before its token is checked."""

from __future__ import annotations

import collections
import ipaddress
import logging
import math
import time
from collections.abc import Callable
from typing import Final

import trio
from taki_protocol import (
    MAX_BOT_MESSAGE_SIZE,
    MAX_CONTAINER_LEN,
    FrameBuffer,
    ProtocolError,
)

from referee.shell.network import describe_error, format_address, not_tls

__all__ = [
    "CONNECT_BURST",
    "CONNECT_RATE_PER_S",
    "PREAUTH_MAX_BYTES",
    "PREAUTH_TIMEOUT_S",
    "AdmissionRefused",
    "Pending",
    "RateLimiter",
    "RefusalLog",
    "describe_handshake_error",
    "peer_of",
    "read_bot_hello",
]

#: Refusals are logged with the remote seats' other lines.
log = logging.getLogger("referee.shell.remote")

CONNECT_RATE_PER_S: Final = 5.0
"""Connection attempts allowed per second and address, on average."""

CONNECT_BURST: Final = 20
"""Connection attempts an address may make at once before the rate applies."""



PREAUTH_TIMEOUT_S: Final = 2.0
"""How long a new connection has to authenticate (TLS handshake and ``bot_hello``)."""


PREAUTH_MAX_BYTES: Final = MAX_BOT_MESSAGE_SIZE
"""The most a peer may send before it has authenticated: one ``bot_hello``, which like
every message of a bot is at most :data:`taki_protocol.MAX_BOT_MESSAGE_SIZE`."""


_REFUSAL_LOG_INTERVAL_S: Final = 10.0


_REFUSAL_LOG_LINES: Final = 10
"""At most this many refusals of each kind are logged every interval, all addresses
together, each address at most once; the others are counted in the next line."""


_TLS_HANDSHAKE: Final = b"\x16\x03"
"""How a TLS connection begins: a handshake record, protocol version 3.x."""


class RateLimiter:
    """A token bucket per address: ``burst`` attempts at once, then ``rate_per_s``.

    IPv6 addresses share the bucket of their /64 network (what one host usually
    holds). At most ``max_tracked`` buckets are kept: when there are more, full buckets
    (which mean nothing) are dropped first, then the longest unused ones.
    """

    def __init__(
        self,
        rate_per_s: float = CONNECT_RATE_PER_S,
        burst: int = CONNECT_BURST,
        *,
        max_tracked: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("the rate must be positive and the burst at least 1")
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.max_tracked = max_tracked
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)

    @staticmethod
    def key(address: str) -> str:
        """The bucket an address counts against."""
        try:
            ip = ipaddress.ip_address(address.partition("%")[0])
        except ValueError:
            return address
        if isinstance(ip, ipaddress.IPv6Address):
            if ip.ipv4_mapped is not None:
                return str(ip.ipv4_mapped)
            return str(ipaddress.IPv6Network((ip, 64), strict=False))
        return str(ip)

    def allow(self, address: str) -> bool:
        """Count one attempt from ``address``; False when it is over the limit."""
        now = self._clock()
        key = self.key(address)
        tokens, when = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - when) * self.rate_per_s)
        allowed = tokens >= 1.0
        self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)  # most recent last
        if len(self._buckets) > self.max_tracked:
            self._prune(now)
        return allowed

    def __len__(self) -> int:
        return len(self._buckets)

    def _prune(self, now: float) -> None:
        full = [
            key
            for key, (tokens, when) in self._buckets.items()
            if tokens + (now - when) * self.rate_per_s >= self.burst
        ]
        for key in full:
            del self._buckets[key]
        excess = len(self._buckets) - self.max_tracked // 2
        if excess > 0:  # the dict is ordered by last use: drop the oldest
            for key in list(self._buckets)[:excess]:
                del self._buckets[key]


class AdmissionRefused(Exception):
    """A connection that may not play: ``kind`` for the counters, ``detail`` for humans."""

    def __init__(self, kind: str, detail: str, *, tell: bool = True) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.tell = tell


def describe_handshake_error(exc: BaseException) -> str:
    hint = " (the peer does not speak TLS: is the bot connecting without --tls?)"
    return describe_error(exc) + (hint if not_tls(exc) else "")


def peer_of(stream: trio.SocketStream) -> tuple[str, str] | None:
    """The peer's (address, printable address:port), None if it is already gone."""
    try:
        name = stream.socket.getpeername()
    except OSError:
        return None
    host, port = str(name[0]), int(name[1])
    return host, format_address(host, port)


async def read_bot_hello(stream: trio.abc.Stream, *, tls: bool) -> bytes:
    """The first message of a new connection, as bytes: at most PREAUTH_MAX_BYTES, and
    nothing after it (a bot waits for ``hello`` before it sends anything else). ``tls``:
    whether the connection is TLS already (if not, a TLS handshake is told apart)."""
    frames = FrameBuffer(PREAUTH_MAX_BYTES, MAX_CONTAINER_LEN)
    while True:
        chunk = await stream.receive_some(PREAUTH_MAX_BYTES + 1 - len(frames))
        if not chunk:
            raise AdmissionRefused("closed", "closed the connection before its bot_hello",
                                   tell=False)
        frames.feed(chunk)
        if not tls and frames.peek(2) == _TLS_HANDSHAKE[: len(frames)]:
            if len(frames) < 2:
                continue
            # The refusal is told all the same: a TLS client takes it for a broken
            # handshake from a server that does not speak TLS, which is the case.
            raise AdmissionRefused(
                "protocol", "it began a TLS handshake, but this referee serves plain TCP"
                " (is the bot connecting with --tls?)",
            )
        try:
            frame = frames.next_frame()
        except ProtocolError as exc:
            raise AdmissionRefused("protocol", f"bad first message: {exc}") from None
        if frame is not None:
            if frames:
                raise AdmissionRefused(
                    "protocol", "sent more than its bot_hello before the referee's hello"
                )
            return frame
        if len(frames) > PREAUTH_MAX_BYTES:
            raise AdmissionRefused(
                "protocol", f"sent more than {PREAUTH_MAX_BYTES} bytes before authenticating"
            )


class Pending:
    """A connection that is authenticating: its address's key, and the scope that drops
    it while it is still reading its ``bot_hello``."""

    __slots__ = ("key", "reading", "scope")

    def __init__(self, key: str) -> None:
        self.key = key
        self.scope = trio.CancelScope()
        self.reading = True


class RefusalLog:
    """The log lines about connections refused before they authenticate, without a
    flood: of each kind of refusal, each address is named at most once every
    :data:`_REFUSAL_LOG_INTERVAL_S`, and at most :data:`_REFUSAL_LOG_LINES` lines are
    written in that time; the refusals left out are counted in the next line of their
    kind."""

    def __init__(self) -> None:
        self._named: dict[tuple[str, str], float] = {}  # (kind, address) -> when named
        self._windows: dict[str, tuple[float, int]] = {}  # kind -> (began, lines in it)
        self._left_out: collections.Counter[str] = collections.Counter()

    def note(self, level: int, kind: str, key: str, message: str, *args: object) -> None:
        """Log ``message % args``, about the address ``key``, unless it is one too many."""
        now = trio.current_time()
        began, lines = self._windows.get(kind, (-math.inf, 0))
        if now - began >= _REFUSAL_LOG_INTERVAL_S:
            began, lines = now, 0
            self._named = {
                named: when for named, when in self._named.items()
                if now - when < _REFUSAL_LOG_INTERVAL_S
            }
        last = self._named.get((kind, key), -math.inf)
        if lines >= _REFUSAL_LOG_LINES or now - last < _REFUSAL_LOG_INTERVAL_S:
            self._windows[kind] = (began, lines)
            self._left_out[kind] += 1
            return
        self._windows[kind] = (began, lines + 1)
        self._named[(kind, key)] = now
        more = self._left_out.pop(kind, 0)
        note = f" ({more} more like it not logged)" if more else ""
        log.log(level, message + "%s", *args, note)
