"""Remote bots: the protocol over TCP (optionally TLS), one secret token per seat.

A remote seat is a bot that runs elsewhere and connects to the referee. The referee
listens on one address and makes a random token for each remote seat, which it writes to
a file for the bots' owners. A connecting bot speaks first: its first message is
``bot_hello`` carrying its token. The referee checks the token and answers ``hello``;
from then on the conversation is exactly the one of a local bot, framed the same way
(PROTOCOL.md, section 14). The connection is bound to its token's seat: it can only
ever play that seat. :func:`referee.shell.seat_setup.open_remote_seats` opens the seats.

Before a peer has authenticated it gets very little:

* connection attempts are rate-limited per address (a token bucket; IPv6 addresses by
  their /64 network): an attempt over the limit is closed at once, without reading;
* at most :data:`MAX_PENDING_PER_ADDRESS` connections from one address (an IPv6 /64)
  may be authenticating at a time, and :data:`MAX_PENDING` from all addresses: past its
  share an address's new connections are closed at once; when all the places are taken,
  the oldest connection of the address that holds the most is dropped to make room for
  one from an address that holds fewer, so that a few addresses cannot lock others out;
* a peer has :data:`~referee.shell.admission.PREAUTH_TIMEOUT_S` to finish its TLS
  handshake, if any, and send one message of at most
  :data:`~referee.shell.admission.PREAUTH_MAX_BYTES`, its ``bot_hello``; anything else
  drops it;
* a missing or wrong token, or the token of a seat whose connection is still alive, is
  refused with an ``error`` message (reason ``protocol``) and logged.

Refusals are logged without a flood: each kind at most once every few seconds per
address, and a few times in all (:mod:`referee.shell.admission`).

:class:`~referee.shell.stream_transport.StreamTransport` gives a connection the interface
of a bot process (:class:`referee.shell.bots.BotTransport`), so that a
:class:`~referee.shell.bots.BotConnection` talks to local and remote bots alike; it maps
every stream error to :class:`~referee.core.faults.BotCrashed` in one place.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import hmac
import logging
import secrets
import ssl
from collections.abc import Sequence
from typing import Final

import trio
from taki_protocol import (
    BotHello,
    Error,
    ProtocolError,
    pack_message,
    unpack_message,
)

from referee.core import DEFAULT_JOIN_TIMEOUT_S, BotFault
from referee.shell.admission import (
    PREAUTH_MAX_BYTES,
    PREAUTH_TIMEOUT_S,
    AdmissionRefused,
    Pending,
    RateLimiter,
    RefusalLog,
    describe_handshake_error,
    peer_of,
    read_bot_hello,
)
from referee.shell.bots import BotConnection
from referee.shell.stream_transport import BROKEN_STREAM, StreamTransport

__all__ = [
    "DEFAULT_JOIN_TIMEOUT_S",
    "MAX_PENDING",
    "MAX_PENDING_PER_ADDRESS",
    "RemoteSeats",
]

log = logging.getLogger(__name__)


MAX_PENDING: Final = 64
"""Connections that may be authenticating at the same time, from all addresses."""

MAX_PENDING_PER_ADDRESS: Final = 8
"""Connections that may be authenticating at the same time from one address (an IPv6
address's /64 network); more from it are closed at once."""

HELLO_TIMEOUT_S: Final = 1.0
"""How long writing ``hello`` (or a refusal) to a new connection may take."""


TOKEN_BYTES: Final = 32
"""Random bytes in a token (it is written as about 43 URL-safe characters)."""

_ACCEPT_CAPACITY_ERRNOS: Final = frozenset(
    {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
)


# --------------------------------------------------------------------------- addresses

# --------------------------------------------------------------------------- tokens


# --------------------------------------------------------------------------- TLS


# --------------------------------------------------------------------------- rate limit


# --------------------------------------------------------------------------- transport


# --------------------------------------------------------------------------- the seats


class RemoteSeats:
    """The remote seats of a match, a league or an SPRT run: their tokens, the
    connections of the bots that joined, and the server that admits them.

    Open it with :func:`open_remote_seats`. A game takes a seat's connection with
    :meth:`take` (waiting for the bot to join) and gives it back with
    :meth:`give_back` when its unit is over: a remote bot keeps its connection from
    one unit to the next, and hears ``shutdown`` only when the seats are closed.
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
        #: Each remote seat's secret token, by name: hexadecimal, so that it never begins
        #: with "-", which a command line (``connect --token TOKEN``) takes for an option.
        self.tokens: dict[str, str] = {
            name: secrets.token_hex(TOKEN_BYTES) for name in names
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
        self._pending: dict[str, list[Pending]] = {}  # by address key, oldest first
        self._pending_count = 0
        self._refusals = RefusalLog()
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
        """A game's unit is done with the seat's connection: keep it for the next."""
        if conn.alive and self._current.get(name) is conn and not self._closing:
            self._make_idle(name, conn)
        elif self._nursery is not None:
            self._nursery.start_soon(conn.process.kill)

    def _make_idle(self, name: str, conn: BotConnection) -> None:
        self._idle[name] = conn
        arrival, self._arrival[name] = self._arrival[name], trio.Event()
        arrival.set()

    # ---------------------------------------------------------------- server

    def serve(self, listeners: Sequence[trio.SocketListener], nursery: trio.Nursery) -> None:
        """Admit the bots that connect to ``listeners``, in tasks of ``nursery`` (which
        also runs each connection's admission and the kills of replaced connections)."""
        self._nursery = nursery
        for listener in listeners:
            nursery.start_soon(self._serve, listener, nursery)

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
            peer = peer_of(stream)
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
            pending = Pending(key)
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

    def _release(self, pending: Pending) -> None:
        """The connection no longer holds a place among those authenticating."""
        held = self._pending.get(pending.key)
        if held is None or pending not in held:
            return
        held.remove(pending)
        if not held:
            del self._pending[pending.key]
        self._pending_count -= 1

    async def _admit(self, tcp: trio.SocketStream, peer: str, pending: Pending) -> None:
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
                received = await read_bot_hello(stream, tls=self._tls is not None)
            pending.reading = False
            if pending.scope.cancelled_caught:
                return  # dropped to make room, and counted then
            if timeout.cancelled_caught:
                raise AdmissionRefused(
                    "timeout", f"no bot_hello within {self._preauth_timeout_s:g} s"
                )
            admitted = await self._authenticate(stream, tcp, peer, received)
        except AdmissionRefused as refusal:
            self.refused[refusal.kind] += 1
            level = logging.INFO if refusal.kind == "closed" else logging.WARNING
            self._refusals.note(level, refusal.kind, pending.key,
                                "refused the connection from %s: %s", peer, refusal.detail)
            if refusal.tell:
                with trio.move_on_after(HELLO_TIMEOUT_S), contextlib.suppress(*BROKEN_STREAM):
                    error = Error(reason="protocol", message=refusal.detail)
                    await stream.send_all(pack_message(error))
        except BROKEN_STREAM as exc:
            self.refused["broken"] += 1
            self._refusals.note(logging.INFO, "broken", pending.key,
                                "the connection from %s failed before it joined: %s", peer,
                                describe_handshake_error(exc))
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
        stream is no longer the caller's to close; raises AdmissionRefused."""
        try:
            hello = unpack_message(received, max_size=PREAUTH_MAX_BYTES)
        except ProtocolError as exc:
            raise AdmissionRefused("protocol", f"bad first message: {exc}") from None
        if not isinstance(hello, BotHello):
            raise AdmissionRefused(
                "protocol", f"the first message must be bot_hello, not {hello.TYPE}")
        if hello.token is None:
            raise AdmissionRefused(
                "no_token", "no token: a remote bot's bot_hello must carry its seat's token"
            )
        name = self.lookup(hello.token)
        if name is None:
            raise AdmissionRefused("unknown_token", "unknown token")
        if self._closing:
            raise AdmissionRefused("closed", "the referee is closing", tell=True)
        async with self._admitting[name]:
            current = self._current.get(name)
            if current is not None and await self._still_connected(name, current):
                raise AdmissionRefused(
                    "duplicate", f"the token of {name} is already connected"
                    f" (from {transport_of(current).peer})",
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
        return not transport_of(conn).peer_gone()  # a game's: look without reading

    async def _close(self, transport: StreamTransport) -> None:
        await transport.kill()
        self._open.discard(transport)

    async def close_all(self) -> None:
        """Say goodbye to every bot still connected, then close every connection."""
        self._closing = True

        async def goodbye(conn: BotConnection) -> None:
            await conn.shutdown()
            await self._close(transport_of(conn))

        async with trio.open_nursery() as nursery:
            for conn in self._current.values():
                nursery.start_soon(goodbye, conn)
        for transport in list(self._open):
            await self._close(transport)
        self._idle.clear()


def transport_of(conn: BotConnection) -> StreamTransport:
    transport = conn.process
    assert isinstance(transport, StreamTransport)
    return transport
