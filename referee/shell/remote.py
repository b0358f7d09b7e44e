"""Remote bots: the protocol over TCP (optionally TLS), one secret token per seat.

A remote seat is a bot that runs elsewhere and connects to the referee. The referee
listens on one address and makes a random token for each remote seat, which it writes to
a file for the bots' owners. A connecting bot speaks first: its first message is
``bot_hello`` carrying its token. The referee checks the token and answers ``hello``;
from then on the conversation is exactly the one of a local bot, framed the same way
(PROTOCOL.md, section 14). The connection is bound to its token's seat: it can only
ever play that seat.

Before a peer has authenticated it gets very little:

* connection attempts are rate-limited per address (a token bucket; IPv6 addresses by
  their /64 network): an attempt over the limit is closed at once, without reading;
* at most :data:`MAX_PENDING_PER_ADDRESS` connections from one address (an IPv6 /64)
  may be authenticating at a time, and :data:`MAX_PENDING` from all addresses: past its
  share an address's new connections are closed at once; when all the places are taken,
  the oldest connection of the address that holds the most is dropped to make room for
  one from an address that holds fewer, so that a few addresses cannot lock others out;
* a peer has :data:`PREAUTH_TIMEOUT_S` to finish its TLS handshake, if any, and send one
  message of at most :data:`PREAUTH_MAX_BYTES`, its ``bot_hello``; anything else drops it;
* a missing or wrong token, or the token of a seat whose connection is still alive, is
  refused with an ``error`` message (reason ``protocol``) and logged.

Refusals are logged without a flood: each kind at most once every few seconds per
address, and a few times in all (:class:`_RefusalLog`).

:class:`StreamTransport` gives a connection the interface of a bot process
(:class:`referee.shell.bots.BotTransport`), so that a :class:`~referee.shell.bots.BotConnection`
talks to local and remote bots alike; it maps every stream error to
:class:`~referee.core.faults.BotCrashed` in one place.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import hmac
import ipaddress
import logging
import math
import secrets
import select
import socket
import ssl
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

import trio
from taki_protocol import (
    MAX_BOT_MESSAGE_SIZE,
    MAX_CONTAINER_LEN,
    BotHello,
    Error,
    FrameScanner,
    ProtocolError,
    pack_message,
    unpack_message,
)

from referee.core.errors import UserError
from referee.core.faults import BotCrashed, BotFault
from referee.core.files import FileWriteError, write_atomically
from referee.shell.bots import BotConnection
from referee.shell.network import describe_error, format_address, not_tls
from referee.shell.process import RECEIVE_CHUNK_BYTES

__all__ = [
    "CONNECT_BURST",
    "CONNECT_RATE_PER_S",
    "DEFAULT_JOIN_TIMEOUT_S",
    "MAX_PENDING",
    "MAX_PENDING_PER_ADDRESS",
    "PREAUTH_MAX_BYTES",
    "PREAUTH_TIMEOUT_S",
    "RateLimiter",
    "RemoteSeats",
    "RemoteSetupError",
    "StreamTransport",
    "open_remote_seats",
    "server_tls_context",
    "write_tokens",
]

log = logging.getLogger(__name__)

PREAUTH_TIMEOUT_S: Final = 2.0
"""How long a new connection has to authenticate (TLS handshake and ``bot_hello``)."""

PREAUTH_MAX_BYTES: Final = MAX_BOT_MESSAGE_SIZE
"""The most a peer may send before it has authenticated: one ``bot_hello``, which like
every message of a bot is at most :data:`taki_protocol.MAX_BOT_MESSAGE_SIZE`."""

MAX_PENDING: Final = 64
"""Connections that may be authenticating at the same time, from all addresses."""

MAX_PENDING_PER_ADDRESS: Final = 8
"""Connections that may be authenticating at the same time from one address (an IPv6
address's /64 network); more from it are closed at once."""

CONNECT_RATE_PER_S: Final = 5.0
"""Connection attempts allowed per second and address, on average."""

CONNECT_BURST: Final = 20
"""Connection attempts an address may make at once before the rate applies."""

DEFAULT_JOIN_TIMEOUT_S: Final = 60.0
"""How long the games wait for a remote bot that is not connected, once per absence
(see :meth:`RemoteSeats.take`)."""

HELLO_TIMEOUT_S: Final = 1.0
"""How long writing ``hello`` (or a refusal) to a new connection may take."""

CLOSE_TIMEOUT_S: Final = 0.2
"""How long closing a connection cleanly (the TLS goodbye) may take."""

TOKEN_BYTES: Final = 32
"""Random bytes in a token (it is written as about 43 URL-safe characters)."""

_ACCEPT_CAPACITY_ERRNOS: Final = frozenset(
    {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
)
_REFUSAL_LOG_INTERVAL_S: Final = 10.0
_REFUSAL_LOG_LINES: Final = 10
"""At most this many refusals of each kind are logged every interval, all addresses
together, each address at most once; the others are counted in the next line."""
_TLS_HANDSHAKE: Final = b"\x16\x03"
"""How a TLS connection begins: a handshake record, protocol version 3.x."""



class RemoteSetupError(UserError):
    """The remote seats cannot be opened as asked (address, TLS files, tokens file)."""


# --------------------------------------------------------------------------- addresses

# --------------------------------------------------------------------------- tokens


def write_tokens(path: Path, tokens: Mapping[str, str]) -> None:
    """Write ``NAME TOKEN`` lines to ``path``, readable by its owner only (mode 0600).

    The file is written under a temporary name in the same directory and renamed into
    place, so that it never exists with other permissions or half written."""
    path = Path(path)
    text = "".join(f"{name} {token}\n" for name, token in tokens.items())
    try:
        write_atomically(path, text, what="tokens file", mode=0o600)
    except FileWriteError as exc:
        raise RemoteSetupError(str(exc)) from None


# --------------------------------------------------------------------------- TLS


def server_tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server-side TLS context with the certificate chain ``cert`` and its ``key``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except OSError as exc:
        raise RemoteSetupError(
            f"cannot read the TLS certificate {cert} or key {key}: {exc.strerror or exc}"
        ) from None
    except ssl.SSLError as exc:
        raise RemoteSetupError(
            f"cannot use the TLS certificate {cert} with the key {key}: {exc}"
        ) from None
    return context


# --------------------------------------------------------------------------- rate limit


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


# --------------------------------------------------------------------------- transport

_BROKEN: Final = (trio.BrokenResourceError, trio.ClosedResourceError, OSError, ssl.SSLError)


class StreamTransport:
    """A remote bot's connection (a trio SocketStream or SSLStream), with the interface
    of a bot process (:class:`referee.shell.bots.BotTransport`).

    ``returncode`` is None while the connection is open and 0 once it is closed, by
    either side; :meth:`status` says which.
    """

    def __init__(self, stream: trio.abc.Stream, socket_stream: trio.SocketStream, peer: str):
        self.stream = stream
        self.peer = peer
        self._socket = socket_stream.socket
        self._ended: str | None = None  # how the connection ended, once it has
        self._closed = False

    def __repr__(self) -> str:
        return f"<StreamTransport {self.peer}: {self.status()}>"

    @property
    def returncode(self) -> int | None:
        return None if self._ended is None else 0

    def status(self) -> str:
        """To follow "the bot ": ``connected from ...``, ``closed the connection``..."""
        if self._ended is None:
            return f"is connected from {self.peer}"
        return self._ended

    def stderr_tail(self, max_lines: int = 20) -> str:
        return ""  # a remote bot's stderr stays on its own machine

    @property
    def closed(self) -> bool:
        """Whether the referee's end of the connection is closed."""
        return self._closed

    def _end(self, how: str) -> None:
        if self._ended is None:
            self._ended = how

    @contextlib.contextmanager
    def _io(self, action: str) -> Iterator[None]:
        """Translate stream failures into :class:`BotCrashed`: the single mapping point."""
        try:
            yield
        except _BROKEN as exc:
            detail = describe_error(exc)
            self._end(f"lost the connection ({detail})")
            raise BotCrashed(f"{action}: {detail}") from exc

    async def send(self, data: bytes, timeout_s: float = math.inf) -> float:
        """Write all of ``data``. Raises BotCrashed when the connection is closed or
        broken, :class:`trio.TooSlowError` when the peer did not take it within
        ``timeout_s`` (part of it may have been sent)."""
        if self._ended is not None:
            raise BotCrashed(f"cannot write to the bot: it {self.status()}")
        started = trio.current_time()
        with trio.move_on_at(started + timeout_s):
            with self._io("cannot write to the bot's connection"):
                await self.stream.send_all(data)
            return started
        raise trio.TooSlowError

    async def receive_some(
        self, max_bytes: int = RECEIVE_CHUNK_BYTES, *, deadline: float = math.inf
    ) -> bytes:
        """Some bytes from the bot; ``b""`` once it closed the connection.
        :class:`trio.TooSlowError` when nothing arrived by ``deadline``."""
        if self._ended is not None:
            if self._closed:
                raise BotCrashed(f"cannot read from the bot: it {self.status()}")
            return b""
        with trio.fail_at(deadline), self._io("cannot read from the bot's connection"):
            data = await self.stream.receive_some(max_bytes)
        if not data:
            self._end("closed the connection")
        return bytes(data)

    def readable_now(self) -> bool:
        """Whether the connection has bytes (or its end) waiting, without waiting."""
        if self._ended is not None:
            return False
        fd = self._socket.fileno()
        return fd >= 0 and bool(select.select([fd], [], [], 0)[0])

    async def close_input(self) -> None:
        """Half-close the connection where the stream allows it (plain TCP): the bot
        reads end of file while the referee can still see it close its end. TLS has no
        half-close, so over TLS this does nothing (the connection stays open until
        :meth:`kill`)."""
        if self._ended is not None or not isinstance(self.stream, trio.abc.HalfCloseableStream):
            return
        with self._io("cannot close the bot's input"):
            await self.stream.send_eof()

    async def wait(self) -> int:
        """Wait for the bot to close the connection, dropping what it still sends."""
        with contextlib.suppress(BotCrashed):
            while self._ended is None:
                await self.receive_some()
        return 0

    async def kill(self) -> None:
        """Close the connection (politely for TLS, briefly). Idempotent."""
        self._end("was disconnected by the referee")
        if self._closed:
            return
        self._closed = True
        with trio.CancelScope(shield=True):
            with trio.move_on_after(CLOSE_TIMEOUT_S) as scope:
                with contextlib.suppress(*_BROKEN):
                    await self.stream.aclose()
            if scope.cancelled_caught:
                await trio.aclose_forcefully(self.stream)

    def peer_gone(self) -> bool:
        """Whether the peer has closed or reset the connection, found without reading
        (a peek at the socket), so it is safe while another task reads. A TLS peer that
        said goodbye before closing looks connected until its goodbye is read."""
        if self._ended is not None:
            return True
        try:
            fd = self._socket.fileno()
            if fd < 0:
                return True
            with socket.fromfd(fd, self._socket.family, self._socket.type) as dup:
                peeked = dup.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            return True
        return not peeked


# --------------------------------------------------------------------------- the seats


class _Refused(Exception):
    """A connection that may not play: ``kind`` for the counters, ``detail`` for humans."""

    def __init__(self, kind: str, detail: str, *, tell: bool = True) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.tell = tell


def _describe_handshake_error(exc: BaseException) -> str:
    hint = " (the peer does not speak TLS: is the bot connecting without --tls?)"
    return describe_error(exc) + (hint if not_tls(exc) else "")


def _peer_of(stream: trio.SocketStream) -> tuple[str, str] | None:
    """The peer's (address, printable address:port), None if it is already gone."""
    try:
        name = stream.socket.getpeername()
    except OSError:
        return None
    host, port = str(name[0]), int(name[1])
    return host, format_address(host, port)


async def _read_bot_hello(stream: trio.abc.Stream, *, tls: bool) -> bytes:
    """The first message of a new connection, as bytes: at most PREAUTH_MAX_BYTES, and
    nothing after it (a bot waits for ``hello`` before it sends anything else). ``tls``:
    whether the connection is TLS already (if not, a TLS handshake is told apart)."""
    buffer = bytearray()
    scanner = FrameScanner(PREAUTH_MAX_BYTES, MAX_CONTAINER_LEN)
    while True:
        chunk = await stream.receive_some(PREAUTH_MAX_BYTES + 1 - len(buffer))
        if not chunk:
            raise _Refused("closed", "closed the connection before its bot_hello", tell=False)
        buffer += chunk
        if not tls and buffer[:2] == _TLS_HANDSHAKE[: len(buffer)]:
            if len(buffer) < 2:
                continue
            # The refusal is told all the same: a TLS client takes it for a broken
            # handshake from a server that does not speak TLS, which is the case.
            raise _Refused(
                "protocol", "it began a TLS handshake, but this referee serves plain TCP"
                " (is the bot connecting with --tls?)",
            )
        try:
            length = scanner.scan(buffer)
        except ProtocolError as exc:
            raise _Refused("protocol", f"bad first message: {exc}") from None
        if length is not None:
            if length != len(buffer):
                raise _Refused(
                    "protocol", "sent more than its bot_hello before the referee's hello"
                )
            return bytes(buffer)
        if len(buffer) > PREAUTH_MAX_BYTES:
            raise _Refused(
                "protocol", f"sent more than {PREAUTH_MAX_BYTES} bytes before authenticating"
            )


class _Pending:
    """A connection that is authenticating: its address's key, and the scope that drops
    it while it is still reading its ``bot_hello``."""

    __slots__ = ("key", "reading", "scope")

    def __init__(self, key: str) -> None:
        self.key = key
        self.scope = trio.CancelScope()
        self.reading = True


class _RefusalLog:
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


class RemoteSeats:
    """The remote seats of a match, a league or an SPRT run: their tokens, the
    connections of the bots that joined, and the server that admits them.

    Open it with :func:`open_remote_seats`. A game takes a seat's connection with
    :meth:`take` (waiting for the bot to join) and gives it back with
    :meth:`give_back` when its block is over: a remote bot keeps its connection from
    one block to the next, and hears ``shutdown`` only when the seats are closed.
    """

    def __init__(
        self,
        names: Sequence[str],
        *,
        join_timeout_s: float = DEFAULT_JOIN_TIMEOUT_S,
        tls: ssl.SSLContext | None = None,
        limiter: RateLimiter | None = None,
        preauth_timeout_s: float = PREAUTH_TIMEOUT_S,
        max_pending: int = MAX_PENDING,
        max_pending_per_address: int = MAX_PENDING_PER_ADDRESS,
    ) -> None:
        if len(set(names)) != len(names):
            raise ValueError("remote seat names must be unique")
        if not join_timeout_s > 0:
            raise ValueError(f"the join timeout must be positive, got {join_timeout_s}")
        if not 1 <= max_pending_per_address <= max_pending:
            raise ValueError("the caps on connections authenticating must be at least 1,"
                             " the one per address at most the one for all")
        #: Each remote seat's secret token, by name.
        self.tokens: dict[str, str] = {
            name: secrets.token_urlsafe(TOKEN_BYTES) for name in names
        }
        self.join_timeout_s = join_timeout_s
        #: Where the seats listen, once open: (host, port) pairs.
        self.addresses: list[tuple[str, int]] = []
        #: Connections refused, by why: rate_limited, busy (too many authenticating),
        #: dropped (to make room for another address's), timeout, protocol, no_token,
        #: unknown_token, duplicate, closed, closing, broken.
        self.refused: collections.Counter[str] = collections.Counter()
        #: Connections admitted.
        self.joined = 0
        self._tls = tls
        self._limiter = limiter if limiter is not None else RateLimiter()
        self._preauth_timeout_s = preauth_timeout_s
        self._current: dict[str, BotConnection] = {}  # the latest admitted, by seat
        self._idle: dict[str, BotConnection] = {}  # admitted and not taken by a game
        self._arrival = {name: trio.Event() for name in names}
        self._admitting = {name: trio.Lock() for name in names}
        self._open: set[StreamTransport] = set()  # every connection not closed yet
        self._max_pending = max_pending
        self._max_pending_per_address = max_pending_per_address
        self._pending: dict[str, list[_Pending]] = {}  # by address key, oldest first
        self._pending_count = 0
        self._refusals = _RefusalLog()
        #: Per seat, the latest its games wait for it in its current absence (set by
        #: the first game that waits for it, cleared when it joins).
        self._join_deadlines: dict[str, float] = {}
        self._closing = False
        self._nursery: trio.Nursery | None = None

    @property
    def names(self) -> list[str]:
        return list(self.tokens)

    @property
    def pending(self) -> int:
        """Connections authenticating right now."""
        return self._pending_count

    def connected(self, name: str) -> bool:
        """Whether the seat's latest connection is open (as far as is known)."""
        conn = self._current.get(name)
        return conn is not None and conn.alive

    def lookup(self, token: str) -> str | None:
        """The seat a token belongs to; compares with every token in constant time."""
        found = None
        given = token.encode()
        for name, expected in self.tokens.items():
            if hmac.compare_digest(given, expected.encode()):
                found = name
        return found

    # ---------------------------------------------------------------- games

    async def take(self, name: str, join_by: float) -> BotConnection | None:
        """The seat's connection for a game, waiting for its bot to join when it is not
        connected; None if it is not connected by the seat's join deadline.

        The wait is once per absence: the first game that waits for a seat that is not
        connected sets the seat's join deadline to its ``join_by`` (Trio's clock), and
        later games wait at most until that same deadline. Once it has passed, games
        take the seat's connection if there is one and do not wait, until the bot joins;
        an absence after that (the bot's connection ended) starts a new wait."""
        while True:
            conn = self._idle.pop(name, None)
            if conn is not None:
                if await conn.check_idle():
                    return conn
                log.info("remote bot %s: its connection ended while it waited (%s)",
                         name, conn.describe_exit())
                continue
            arrival = self._arrival[name]
            deadline = self._join_deadlines.setdefault(name, join_by)
            left = deadline - trio.current_time()
            if left <= 0:
                return None
            log.info("waiting up to %.3g s for remote bot %s to join", left, name)
            with trio.move_on_at(deadline) as scope:
                await arrival.wait()
            if scope.cancelled_caught and name not in self._idle:
                log.warning("remote bot %s did not join within %g s: its games forfeit"
                            " without waiting until it joins", name, self.join_timeout_s)

    async def wait_until_joined(self, timeout_s: float) -> list[str]:
        """Wait until every seat's bot has joined, for at most ``timeout_s``; the seats
        still missing then (an empty list when all joined). Their games are not touched:
        a run that cannot do without them stops before its first game."""

        def missing() -> list[str]:
            return [n for n in self.tokens if n not in self._idle and not self.connected(n)]

        with trio.move_on_after(timeout_s):
            while missing():
                await self._arrival[missing()[0]].wait()
        return missing()

    def give_back(self, name: str, conn: BotConnection) -> None:
        """A game's block is done with the seat's connection: keep it for the next."""
        if conn.alive and self._current.get(name) is conn and not self._closing:
            self._make_idle(name, conn)
        elif self._nursery is not None:
            self._nursery.start_soon(conn.process.kill)

    def _make_idle(self, name: str, conn: BotConnection) -> None:
        self._idle[name] = conn
        arrival, self._arrival[name] = self._arrival[name], trio.Event()
        arrival.set()

    # ---------------------------------------------------------------- server

    async def _serve(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:
                if exc.errno not in _ACCEPT_CAPACITY_ERRNOS:
                    log.error("cannot accept remote connections: %s", exc)
                else:
                    log.warning("cannot accept remote connections for now: %s", exc)
                await trio.sleep(0.1)
                continue
            peer = _peer_of(stream)
            if peer is None:
                await trio.aclose_forcefully(stream)
                continue
            host, shown = peer
            key = self._limiter.key(host)
            if self._closing:
                self.refused["closing"] += 1
                await trio.aclose_forcefully(stream)
                continue
            if not self._limiter.allow(host):
                self._refuse("rate_limited", key, "refused a connection from %s: over the"
                             " rate limit (%d attempts at once, then %g per second)",
                             shown, self._limiter.burst, self._limiter.rate_per_s)
                await trio.aclose_forcefully(stream)
                continue
            if not self._make_room(key, shown):
                await trio.aclose_forcefully(stream)
                continue
            pending = _Pending(key)
            self._pending.setdefault(key, []).append(pending)
            self._pending_count += 1
            nursery.start_soon(self._admit, stream, shown, pending, name=f"remote peer {shown}")

    def _make_room(self, key: str, peer: str) -> bool:
        """Whether a new connection from the address ``key`` may authenticate; when all
        the places are taken, one is freed from the address that holds the most, if it
        holds more than ``key``."""
        held = len(self._pending.get(key, ()))
        if held >= self._max_pending_per_address:
            self._refuse("busy", key, "refused a connection from %s: %d connections from"
                         " its address are authenticating already", peer, held)
            return False
        if self._pending_count < self._max_pending:
            return True
        most = max(self._pending.values(), key=len)
        count = len(most)
        oldest = next((p for p in most if p.reading), None) if count > held else None
        if oldest is None:
            self._refuse("busy", key, "refused a connection from %s: %d connections are"
                         " authenticating already", peer, self._pending_count)
            return False
        oldest.scope.cancel()
        self._release(oldest)
        self._refuse("dropped", oldest.key, "dropped the oldest of the %d connections from"
                     " %s that are authenticating, to make room for one from another"
                     " address (%d may authenticate at once)", count, oldest.key,
                     self._max_pending)
        return True

    def _refuse(self, kind: str, key: str, message: str, *args: object) -> None:
        """Count a connection refused before it was read, and log it (not every one)."""
        self.refused[kind] += 1
        self._refusals.note(logging.WARNING, kind, key, message, *args)

    def _release(self, pending: _Pending) -> None:
        """The connection no longer holds a place among those authenticating."""
        held = self._pending.get(pending.key)
        if held is None or pending not in held:
            return
        held.remove(pending)
        if not held:
            del self._pending[pending.key]
        self._pending_count -= 1

    async def _admit(self, tcp: trio.SocketStream, peer: str, pending: _Pending) -> None:
        """Authenticate one new connection and hand it to its seat, or refuse it."""
        stream: trio.abc.Stream = tcp
        admitted = False
        try:
            with pending.scope, trio.move_on_after(self._preauth_timeout_s) as timeout:
                if self._tls is not None:
                    stream = trio.SSLStream(
                        tcp, self._tls, server_side=True, https_compatible=True
                    )
                    await stream.do_handshake()
                received = await _read_bot_hello(stream, tls=self._tls is not None)
            pending.reading = False
            if pending.scope.cancelled_caught:
                return  # dropped to make room, and counted then
            if timeout.cancelled_caught:
                raise _Refused(
                    "timeout", f"no bot_hello within {self._preauth_timeout_s:g} s"
                )
            admitted = await self._authenticate(stream, tcp, peer, received)
        except _Refused as refusal:
            self.refused[refusal.kind] += 1
            level = logging.INFO if refusal.kind == "closed" else logging.WARNING
            self._refusals.note(level, refusal.kind, pending.key,
                                "refused the connection from %s: %s", peer, refusal.detail)
            if refusal.tell:
                with trio.move_on_after(HELLO_TIMEOUT_S), contextlib.suppress(*_BROKEN):
                    error = Error(reason="protocol", message=refusal.detail)
                    await stream.send_all(pack_message(error))
        except _BROKEN as exc:
            self.refused["broken"] += 1
            self._refusals.note(logging.INFO, "broken", pending.key,
                                "the connection from %s failed before it joined: %s", peer,
                                _describe_handshake_error(exc))
        except Exception:  # a bug: it must not stop the server
            self.refused["broken"] += 1
            log.exception("error while admitting the connection from %s", peer)
        finally:
            pending.reading = False
            self._release(pending)
            if not admitted:
                await trio.aclose_forcefully(stream)

    async def _authenticate(
        self, stream: trio.abc.Stream, tcp: trio.SocketStream, peer: str, received: bytes
    ) -> bool:
        """Check the token of a new connection and admit it to its seat. True once the
        stream is no longer the caller's to close; raises _Refused."""
        try:
            hello = unpack_message(received, max_size=PREAUTH_MAX_BYTES)
        except ProtocolError as exc:
            raise _Refused("protocol", f"bad first message: {exc}") from None
        if not isinstance(hello, BotHello):
            raise _Refused("protocol", f"the first message must be bot_hello, not {hello.TYPE}")
        if hello.token is None:
            raise _Refused(
                "no_token", "no token: a remote bot's bot_hello must carry its seat's token"
            )
        name = self.lookup(hello.token)
        if name is None:
            raise _Refused("unknown_token", "unknown token")
        if self._closing:
            raise _Refused("closed", "the referee is closing", tell=True)
        async with self._admitting[name]:
            current = self._current.get(name)
            if current is not None and await self._still_connected(name, current):
                raise _Refused(
                    "duplicate", f"the token of {name} is already connected"
                    f" (from {_transport_of(current).peer})",
                )
            transport = StreamTransport(stream, tcp, peer)
            self._open = {t for t in self._open if not t.closed}
            self._open.add(transport)
            conn = BotConnection(name, transport)
            try:
                await conn.answer_hello(received, HELLO_TIMEOUT_S)
            except BotFault as fault:
                self.refused["broken"] += 1
                log.info("remote bot %s from %s left during the handshake: %s", name, peer, fault)
                await self._close(transport)
                return True  # closed already
            self._current[name] = conn
            self.joined += 1
            self._join_deadlines.pop(name, None)  # a later absence is waited for anew
            self._make_idle(name, conn)
        log.info("remote bot %s joined from %s (it calls itself %r)", name, peer, hello.name)
        return True

    async def _still_connected(self, name: str, conn: BotConnection) -> bool:
        """Whether a seat's current connection is alive, for a new one with its token."""
        if not conn.alive:
            return False
        if self._idle.get(name) is conn:  # nobody else reads it: look for its end
            del self._idle[name]
            if await conn.check_idle():
                self._make_idle(name, conn)
                return True
            return False
        return not _transport_of(conn).peer_gone()  # a game's: look without reading

    async def _close(self, transport: StreamTransport) -> None:
        await transport.kill()
        self._open.discard(transport)

    async def _close_all(self) -> None:
        """Say goodbye to every bot still connected, then close every connection."""
        self._closing = True

        async def goodbye(conn: BotConnection) -> None:
            await conn.shutdown()
            await self._close(_transport_of(conn))

        async with trio.open_nursery() as nursery:
            for conn in self._current.values():
                nursery.start_soon(goodbye, conn)
        for transport in list(self._open):
            await self._close(transport)
        self._idle.clear()


def _transport_of(conn: BotConnection) -> StreamTransport:
    transport = conn.process
    assert isinstance(transport, StreamTransport)
    return transport


@contextlib.asynccontextmanager
async def open_remote_seats(
    names: Sequence[str],
    listen: tuple[str, int],
    *,
    tokens_path: Path | None = None,
    join_timeout_s: float = DEFAULT_JOIN_TIMEOUT_S,
    tls: ssl.SSLContext | None = None,
    limiter: RateLimiter | None = None,
    preauth_timeout_s: float = PREAUTH_TIMEOUT_S,
    max_pending: int = MAX_PENDING,
    max_pending_per_address: int = MAX_PENDING_PER_ADDRESS,
) -> AsyncIterator[RemoteSeats]:
    """Listen on ``listen`` (host, port; port 0 picks a free one) for the bots of the
    remote seats ``names``, write their tokens to ``tokens_path``, and yield the seats.

    On exit every bot still connected is sent ``shutdown`` and every connection is
    closed. Raises :class:`RemoteSetupError` when the address cannot be listened on or
    the tokens file cannot be written. Exceptions from the body leave unwrapped.
    """
    seats = RemoteSeats(
        names, join_timeout_s=join_timeout_s, tls=tls, limiter=limiter,
        preauth_timeout_s=preauth_timeout_s, max_pending=max_pending,
        max_pending_per_address=max_pending_per_address,
    )
    host, port = listen
    try:
        listeners = await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        raise RemoteSetupError(
            f"cannot listen on {format_address(host, port)}: {exc.strerror or exc}"
        ) from None
    raised: BaseException | None = None
    unwrapped = False
    try:
        for listener in listeners:
            name = listener.socket.getsockname()
            seats.addresses.append((str(name[0]), int(name[1])))
        if tokens_path is not None:
            write_tokens(tokens_path, seats.tokens)
        where = ", ".join(format_address(h, p) for h, p in seats.addresses)
        security = "TLS" if tls is not None else "plain TCP"
        log.info("remote seats %s listen on %s (%s); tokens in %s", ", ".join(names), where,
                 security, tokens_path if tokens_path is not None else "memory")
        try:
            async with trio.open_nursery() as nursery:
                seats._nursery = nursery
                for listener in listeners:
                    nursery.start_soon(seats._serve, listener, nursery)
                try:
                    yield seats
                except BaseException as exc:
                    raised = exc
                    raise
                finally:
                    with trio.CancelScope(shield=True):
                        await seats._close_all()
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # The server's tasks never raise, so the group can only wrap the body's.
            if raised is None or len(group.exceptions) != 1 or group.exceptions[0] is not raised:
                raise
            unwrapped = True
    finally:
        with trio.CancelScope(shield=True):
            for listener in listeners:
                await listener.aclose()
    if unwrapped:
        assert raised is not None
        raise raised
