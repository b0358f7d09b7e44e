"""A remote bot's connection with the interface of a bot process, so that a game treats a
remote seat like a local one; its failures become :class:`~referee.core.faults.BotCrashed`."""

from __future__ import annotations

import contextlib
import math
import select
import socket
import ssl
from collections.abc import Iterator
from typing import Final

import trio

from referee.core import BotCrashed
from referee.shell.network import describe_error
from referee.shell.process import RECEIVE_CHUNK_BYTES

CLOSE_TIMEOUT_S: Final = 0.2
"""How long closing a connection cleanly (the TLS goodbye) may take."""

BROKEN_STREAM: Final = (trio.BrokenResourceError, trio.ClosedResourceError, OSError, ssl.SSLError)


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
        except BROKEN_STREAM as exc:
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
                with contextlib.suppress(*BROKEN_STREAM):
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
