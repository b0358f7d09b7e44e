"""``taki-referee connect``: play a local bot on a remote referee's seat.

Any bot that speaks the protocol on its stdin and stdout plays remotely unchanged: this
adapter connects to the referee, authenticates with the seat's token, starts the bot
under the same supervision as the referee does (``referee.shell.process.open_bot_process``)
and copies bytes between the connection and the bot until either side ends.

The order on the connection (PROTOCOL.md, section 14): the adapter sends its own
``bot_hello`` with the token at once; the referee answers ``hello`` (or ``error`` when
it refuses the token); the adapter then starts the bot, hands it the ``hello``, keeps
the bot's own ``bot_hello`` to itself (the referee has had one already) and from then
on only copies bytes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

import trio
from taki_protocol import (
    MAX_CONTAINER_LEN,
    MAX_MESSAGE_SIZE,
    PROTOCOL_VERSION,
    BotHello,
    Error,
    FrameBuffer,
    Hello,
    Message,
    ProtocolError,
    RefereeStream,
    decode_message,
    pack_message,
    unpack_message,
)

from referee.core import BotCommand, BotCrashed, UserError, first_leaf
from referee.shell.network import describe_error, format_address, not_tls
from referee.shell.process import RECEIVE_CHUNK_BYTES, BotProcess
from referee.shell.spawn import open_bot_process

__all__ = ["ConnectError", "client_tls_context", "connect_bot"]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S: Final = 10.0
"""How long connecting (and the TLS handshake) may take."""

ANSWER_TIMEOUT_S: Final = 30.0
"""How long the referee may take to answer the adapter's ``bot_hello``."""

BOT_EXIT_WAIT_S: Final = 2.0
"""How long the bot has to exit by itself once the referee has gone."""

_BROKEN: Final = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)


class ConnectError(UserError):
    """The session could not start, or did not end with the referee's ``shutdown``."""


class _Closed(ConnectError):
    """The other side closed the stream before its first message."""


_REFUSED_ADDRESS: Final = (
    "it refused this address for opening too many connections (wait a few seconds,"
    " then try again)"
)
"""Why a referee may close a new connection without a word: its limits before a bot
authenticates are enforced without reading or writing (PROTOCOL.md, section 14)."""


def client_tls_context(ca: Path | None = None) -> ssl.SSLContext:
    """A TLS context that checks the referee's certificate against ``ca`` (PEM), or
    against the system's certificate authorities."""
    try:
        return ssl.create_default_context(cafile=None if ca is None else str(ca))
    except (OSError, ssl.SSLError) as exc:
        raise ConnectError(f"cannot use the CA certificates in {ca}: {exc}") from None


async def _read_message(
    receive: Callable[[], Awaitable[bytes | bytearray]], what: str
) -> tuple[Message, bytes, bytes]:
    """The first message of a byte stream: (message, its bytes, the bytes after it)."""
    frames = FrameBuffer(MAX_MESSAGE_SIZE, MAX_CONTAINER_LEN)
    while True:
        data = await receive()
        if not data:
            raise _Closed(f"{what} closed before its first message")
        frames.feed(data)
        try:
            frame = frames.next_frame()
            if frame is None:
                continue
            return unpack_message(frame), frame, frames.peek(len(frames))
        except ProtocolError as exc:
            raise ConnectError(f"{what}'s first message is not valid: {exc}") from None


class _Watcher:
    """Follows the referee's messages as they are relayed, to tell how the session
    ended: the last ``error`` or ``shutdown`` is kept."""

    def __init__(self) -> None:
        self._stream: RefereeStream | None = RefereeStream()
        self.end: Message | None = None
        self.messages = 0

    def feed(self, data: bytes) -> None:
        if self._stream is None:
            return
        try:
            for obj in self._stream.feed(data):
                self.messages += 1
                if obj.get("type") in ("error", "shutdown"):
                    with contextlib.suppress(ProtocolError):
                        self.end = decode_message(obj)
        except ProtocolError:
            self._stream = None  # not ours to judge: the bot will complain


async def connect_bot(
    address: tuple[str, int],
    token: str,
    command: BotCommand,
    *,
    name: str,
    tls: ssl.SSLContext | None = None,
    stderr_path: Path | None = None,
    startup_timeout_s: float = 10.0,
) -> str:
    """Play ``command`` on the referee at ``address`` with the seat's ``token``.

    Returns how the session ended, after the referee's ``shutdown``. Raises
    :class:`ConnectError` when the referee cannot be reached or refuses the token, when
    the bot fails to start, or when the session ends any other way (a forfeit, the
    referee or the bot gone)."""
    host, port = address
    where = format_address(host, port)
    with trio.move_on_after(CONNECT_TIMEOUT_S) as scope:
        try:
            tcp = await trio.open_tcp_stream(host, port)
        except OSError as exc:
            raise ConnectError(f"cannot connect to {where}: {_why(exc)}") from None
    if scope.cancelled_caught:
        raise ConnectError(f"cannot connect to {where}: no answer within {CONNECT_TIMEOUT_S:g} s")
    stream: trio.abc.Stream = tcp
    try:
        if tls is not None:
            stream = trio.SSLStream(tcp, tls, server_hostname=host)
            with trio.move_on_after(CONNECT_TIMEOUT_S) as scope:
                try:
                    await stream.do_handshake()
                except trio.BrokenResourceError as exc:
                    raise ConnectError(_handshake_failed(exc, where)) from None
            if scope.cancelled_caught:
                raise ConnectError(f"TLS handshake with {where} timed out")
        return await _session(stream, where, token, command, name, stderr_path,
                              startup_timeout_s, tls=tls is not None)
    except _BROKEN as exc:
        raise ConnectError(
            f"lost the connection to the referee at {where}: {describe_error(exc)}"
        ) from None
    finally:
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)


async def _session(
    stream: trio.abc.Stream,
    where: str,
    token: str,
    command: BotCommand,
    name: str,
    stderr_path: Path | None,
    startup_timeout_s: float,
    *,
    tls: bool,
) -> str:
    # The bot starts while the referee checks the token, so its start-up does not eat
    # into the time of its first decision.
    async with open_bot_process(command, stderr_path=stderr_path) as bot:
        answer, frame, rest = await _answer(stream, where, token, name, tls=tls)
        if isinstance(answer, Error):
            raise ConnectError(f"the referee at {where} refused the bot: {answer.message}")
        if not isinstance(answer, Hello):
            raise ConnectError(f"the referee's first message is {answer.TYPE!r}, not 'hello'")
        if answer.protocol != PROTOCOL_VERSION:
            raise ConnectError(
                f"the referee speaks protocol {answer.protocol}, not {PROTOCOL_VERSION}"
            )
        log.info("connected to %s (%s) as %s", where, answer.referee, name)

        try:
            await bot.send(frame + rest)
            with trio.move_on_after(startup_timeout_s) as scope:
                hello, _, early = await _read_message(bot.receive_some, "the bot's output")
        except (BotCrashed, ConnectError) as exc:
            raise ConnectError(f"the bot did not start: {exc}{_tail(bot)}") from None
        if scope.cancelled_caught:
            raise ConnectError(f"the bot sent no bot_hello within {startup_timeout_s:g} s")
        if not isinstance(hello, BotHello):
            raise ConnectError(f"the bot's first message is {hello.TYPE!r}, not 'bot_hello'")
        log.info("the bot calls itself %r; relaying", hello.name)
        watcher = _Watcher()
        watcher.feed(rest)
        if early:
            await stream.send_all(early)
        referee_closed = await _relay(stream, bot, watcher)
        end = watcher.end
        if isinstance(end, Error):
            raise ConnectError(f"the referee forfeited the bot ({end.reason}): {end.message}")
        if end is not None:
            return f"the referee ended the session after {watcher.messages} messages"
        if referee_closed:
            raise ConnectError(f"the referee at {where} closed the connection")
        raise ConnectError(f"the bot {bot.status()} before the referee ended the session"
                           f"{_tail(bot)}")


async def _answer(
    stream: trio.abc.Stream, where: str, token: str, name: str, *, tls: bool
) -> tuple[Message, bytes, bytes]:
    """Send the adapter's ``bot_hello`` and read the referee's answer: (the answer, its
    bytes, the bytes after it). A referee that closes the connection without a word is
    explained by the likely reasons."""
    try:
        await stream.send_all(pack_message(BotHello(name=name, token=token)))
        with trio.move_on_after(ANSWER_TIMEOUT_S):
            return await _read_message(
                lambda: stream.receive_some(RECEIVE_CHUNK_BYTES), "the referee's connection"
            )
    except (_Closed, *_BROKEN) as exc:
        how = "" if isinstance(exc, _Closed) else f" ({describe_error(exc)})"
        tls_hint = "" if tls else "it serves TLS (connect with --tls), or "
        raise ConnectError(
            f"the referee at {where} closed the connection before answering{how}; likely"
            f" {tls_hint}{_REFUSED_ADDRESS}, or it is not a taki referee"
        ) from None
    raise ConnectError(f"the referee at {where} did not answer within {ANSWER_TIMEOUT_S:g} s")


def _handshake_failed(exc: trio.BrokenResourceError, where: str) -> str:
    """Why the TLS handshake failed, with the likely reason when it is not the
    referee's certificate."""
    said = f"TLS handshake with {where} failed: {describe_error(exc)}"
    if isinstance(exc.__cause__, ssl.SSLCertVerificationError):
        return said
    if not_tls(exc):
        return f"{said}; likely the referee serves plain TCP (connect without --tls)"
    return f"{said}; likely {_REFUSED_ADDRESS}, or it is not a taki referee"


def _why(exc: OSError) -> str:
    """What went wrong with a connection attempt; for several addresses, with the first
    address's reason (e.g. "Connection refused")."""
    cause = None if exc.__cause__ is None else first_leaf(exc.__cause__)
    if isinstance(cause, OSError) and cause.errno:
        return os.strerror(cause.errno)
    return exc.strerror or str(exc)


def _tail(bot: BotProcess) -> str:
    tail = bot.stderr_tail(5)
    return f"; its last stderr lines:\n{tail}" if tail else ""


async def _relay(stream: trio.abc.Stream, bot: BotProcess, watcher: _Watcher) -> bool:
    """Copy bytes both ways until one side ends; True when the referee's did first."""
    referee_closed = False

    async def down(cancel: trio.CancelScope) -> None:  # referee -> bot
        nonlocal referee_closed
        while True:
            try:
                data = await stream.receive_some(RECEIVE_CHUNK_BYTES)
            except _BROKEN:
                data = b""
            if not data:
                referee_closed = True
                break
            watcher.feed(bytes(data))
            try:
                await bot.send(bytes(data))
            except BotCrashed:
                return  # the other direction sees the bot's end
        # The referee has gone: the bot reads end of file, and has a moment to exit.
        with contextlib.suppress(*_BROKEN):
            await bot.close_input()
        with trio.move_on_after(BOT_EXIT_WAIT_S):
            await bot.wait()
        cancel.cancel()

    async def up(cancel: trio.CancelScope) -> None:  # bot -> referee
        while True:
            try:
                data = await bot.receive_some()
            except BotCrashed:
                break
            if not data:
                break
            try:
                await stream.send_all(data)
            except _BROKEN:
                break
        cancel.cancel()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(down, nursery.cancel_scope)
        nursery.start_soon(up, nursery.cancel_scope)
    return referee_closed
