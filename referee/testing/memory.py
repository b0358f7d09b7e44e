"""A bot that lives in memory: a Python coroutine in the referee's own Trio run, on the
other end of an in-memory byte stream.

:func:`memory_bot_pair` makes the two ends of one such stream. The referee's end,
:class:`MemoryTransport`, has the interface of a bot process
(:class:`referee.shell.bots.BotTransport`): a :class:`~referee.shell.bots.BotConnection`
talks through it as through a pipe, with the same typed faults. The bot's end,
:class:`BotEnd`, reads the referee's messages and writes its answers through
``taki_protocol``'s sans-I/O :class:`~taki_protocol.Codec` (role ``"bot"``, which checks
what the referee sends), or writes any bytes at all, sleeps, writes to its stderr, closes
its output or exits with a status. :func:`open_memory_bot` runs such a bot beside the
body of an ``async with`` and completes the handshake, as
:func:`~referee.shell.bots.open_bot` does for a process.

Every wait is on Trio's clock, so under :class:`trio.testing.MockClock` a bot that
thinks for minutes costs no real time. Bytes move in order, a stream holds at most
:data:`PIPE_CAPACITY_BYTES` unread (a writer waits, as on a full pipe), and what one end
wrote is readable by the other at once. The games of the referee's own tests run on
these bots (``tests/memory_bots.py`` holds the scripted ones).
"""

from __future__ import annotations

import contextlib
import math
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Final, NoReturn

import trio
from taki_protocol import EOF, NEED_DATA, Codec, Message

from referee.core import STARVED_WAIT_CAP, BotCrashed, BotSpec
from referee.shell import (
    RECEIVE_CHUNK_BYTES,
    BotConnection,
    BotTransport,
    bot_session,
    describe_exit_status,
    service_nursery,
)

__all__ = [
    "PIPE_CAPACITY_BYTES",
    "BotEnd",
    "BotScript",
    "MemoryOpener",
    "MemoryTransport",
    "memory_bot_pair",
    "open_memory_bot",
]

PIPE_CAPACITY_BYTES: Final = 1 << 16
"""How many unread bytes one direction holds before its writer waits (a Linux pipe's)."""

_STDERR_TAIL_BYTES: Final = 8192

#: A bot written in Python: it plays through its end of the stream until it returns
#: (the bot exits with status 0) or calls :meth:`BotEnd.exit`.
BotScript = Callable[["BotEnd"], Awaitable[None]]


class _Pipe:
    """One direction of the stream: bytes in order, then, once closed, its end."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.closed = False
        self._changed = trio.lowlevel.ParkingLot()

    def _wake(self) -> None:
        self._changed.unpark_all()

    def close(self) -> None:
        self.closed = True
        self._wake()

    async def write(self, data: bytes) -> None:
        """Write all of ``data``: what fits at once without yielding (as a pipe write
        that fits costs one system call), the rest as the reader makes room. Raises
        :class:`trio.BrokenResourceError` once the pipe is closed."""
        view = memoryview(data)
        while True:
            if self.closed:
                raise trio.BrokenResourceError("the pipe is closed")
            room = PIPE_CAPACITY_BYTES - len(self.buffer)
            if room > 0:
                self.buffer += view[:room]
                view = view[room:]
                self._wake()
            if not view:
                return
            await self._changed.park()

    async def read(self, max_bytes: int) -> bytes:
        """Up to ``max_bytes`` that were written; ``b""`` once the pipe is closed and
        empty."""
        while not self.buffer and not self.closed:
            await self._changed.park()
        await trio.lowlevel.cancel_shielded_checkpoint()
        data = bytes(self.buffer[:max_bytes])
        del self.buffer[:max_bytes]
        self._wake()
        return data


class _Bot:
    """What both ends share: the two pipes, the bot's stderr and its exit status."""

    def __init__(self) -> None:
        self.to_bot = _Pipe()
        self.from_bot = _Pipe()
        self.stderr = bytearray()
        self.returncode: int | None = None
        self.exited = trio.Event()
        #: Cancels the bot's coroutine when the referee kills it, and only then: as a
        #: process goes on when the referee's run is cancelled, so does the bot.
        self.scope = trio.CancelScope(shield=True)

    def end(self, returncode: int) -> None:
        """The bot is gone: its output ends after what it wrote, its input is broken."""
        if self.returncode is not None:
            return
        self.returncode = returncode
        self.from_bot.close()
        self.to_bot.close()
        self.exited.set()


class MemoryTransport:
    """The referee's end of an in-memory bot: a :class:`referee.shell.bots.BotTransport`.

    ``returncode`` is None while the bot runs, its exit status once it returned or
    exited, ``-SIGKILL`` once the referee killed it."""

    def __init__(self, bot: _Bot) -> None:
        self._bot = bot

    def __repr__(self) -> str:
        return f"<MemoryTransport: {self.status()}>"

    @property
    def returncode(self) -> int | None:
        return self._bot.returncode

    def status(self) -> str:
        code = self._bot.returncode
        return "running" if code is None else describe_exit_status(code)

    def stderr_tail(self, max_lines: int = 20) -> str:
        lines = self._bot.stderr.decode("utf-8", errors="replace").splitlines()
        return "\n".join(lines[-max_lines:]) if max_lines > 0 else ""

    async def send(self, data: bytes, timeout_s: float = math.inf) -> float:
        if self._bot.returncode is not None:
            raise BotCrashed(f"cannot write to the bot: {self.status()}")
        started = trio.current_time()
        with trio.move_on_at(started + timeout_s):
            try:
                await self._bot.to_bot.write(data)
            except trio.BrokenResourceError:
                raise BotCrashed(f"cannot write to the bot: its input is closed"
                                 f" ({self.status()})") from None
            return started
        raise trio.TooSlowError

    async def receive_some(
        self, max_bytes: int = RECEIVE_CHUNK_BYTES, *, deadline: float = math.inf
    ) -> bytes:
        with trio.fail_at(deadline):
            return await self._bot.from_bot.read(max_bytes)

    def readable_now(self) -> bool:
        pipe = self._bot.from_bot
        return bool(pipe.buffer) or pipe.closed

    async def close_input(self) -> None:
        await trio.lowlevel.checkpoint()
        self._bot.to_bot.close()

    async def wait(self) -> int:
        await self._bot.exited.wait()
        assert self._bot.returncode is not None
        return self._bot.returncode

    async def kill(self) -> None:
        self._bot.scope.cancel()
        self._bot.end(-signal.SIGKILL)
        await trio.lowlevel.cancel_shielded_checkpoint()


class _Exit(BaseException):
    """Raised by :meth:`BotEnd.exit` to end the bot's coroutine, as ``sys.exit`` does."""


class BotEnd:
    """The bot's end of an in-memory bot: what a bot written in Python plays through."""

    def __init__(self, bot: _Bot) -> None:
        self._bot = bot
        #: The bot's side of the conversation; it refuses what the referee may not send.
        self.codec = Codec("bot")

    async def receive(self) -> Message | None:
        """The referee's next message; None at the end of the bot's input."""
        while True:
            message = self.codec.next_message()
            if message is NEED_DATA:
                self.codec.receive_data(await self._bot.to_bot.read(RECEIVE_CHUNK_BYTES))
                continue
            if message is EOF:
                return None
            assert not isinstance(message, type(EOF))
            return message

    async def read(self, max_bytes: int = RECEIVE_CHUNK_BYTES) -> bytes:
        """Bytes from the referee as they came, past the codec (a bot reads either
        this way or with :meth:`receive`); ``b""`` at the end of its input."""
        return await self._bot.to_bot.read(max_bytes)

    async def send(self, message: Message) -> None:
        """Write one message, checked by the bot's codec."""
        await self.write(self.codec.send(message))

    async def write(self, data: bytes) -> None:
        """Write any bytes to the referee. A bot whose output is closed exits (as a
        process killed by SIGPIPE would)."""
        try:
            await self._bot.from_bot.write(data)
        except trio.BrokenResourceError:
            self.exit(-signal.SIGPIPE)

    def write_stderr(self, text: str) -> None:
        """Write to the bot's stderr (the referee keeps its last few KiB)."""
        self._bot.stderr += text.encode()
        del self._bot.stderr[:-_STDERR_TAIL_BYTES]

    def close_output(self) -> None:
        """Close the bot's output while the bot goes on running."""
        self._bot.from_bot.close()

    def exit(self, status: int) -> NoReturn:
        """End the bot with ``status``: its output ends, it reads and writes no more."""
        self._bot.end(status)
        raise _Exit


def memory_bot_pair() -> tuple[MemoryTransport, BotEnd]:
    """The two ends of one in-memory bot: the referee's and the bot's. Nothing runs the
    bot: the caller plays its end (:func:`open_memory_bot` runs a script on it)."""
    bot = _Bot()
    return MemoryTransport(bot), BotEnd(bot)


async def _run(script: BotScript, end: BotEnd, bot: _Bot) -> None:
    """Run the bot's coroutine until it returns (status 0), exits or is killed."""
    with bot.scope:
        try:
            await script(end)
        except _Exit:
            return
        bot.end(0)


@contextlib.asynccontextmanager
async def open_memory_bot(
    name: str,
    script: BotScript,
    *,
    startup_ms: int,
    grace_ms: int = 0,
    stderr_path: Path | None = None,
    connection: Callable[[str, BotTransport], BotConnection] = BotConnection,
    starved_cap: int = STARVED_WAIT_CAP,
) -> AsyncIterator[BotConnection]:
    """Run ``script`` as the bot ``name`` and complete the handshake, as
    :func:`referee.shell.bots.open_bot` does with a process: a bot that fails the
    handshake yields a connection whose ``fault`` is set. On exit the bot is told to
    shut down, then stopped.

    ``stderr_path`` is taken for the sake of the interface and not written: the bot's
    stderr stays in memory (:meth:`MemoryTransport.stderr_tail`). Writing it would take
    a thread, and while a thread runs, Trio's autojump clock sees every task waiting and
    jumps to the next deadline.

    What the bot's coroutine raises (a bug in the script, or a message from the referee
    that its codec refused) leaves the ``async with`` in an exception group."""
    bot = _Bot()
    transport, end = MemoryTransport(bot), BotEnd(bot)
    async with service_nursery() as nursery:
        nursery.start_soon(_run, script, end, bot)
        try:
            async with bot_session(connection(name, transport), startup_ms=startup_ms,
                                   grace_ms=grace_ms, starved_cap=starved_cap) as conn:
                yield conn
        finally:
            with trio.CancelScope(shield=True):
                await transport.kill()


class MemoryOpener:
    """Opens the in-memory bot of a :class:`~referee.core.specs.BotSpec` by its name
    among ``scripts``: what ``referee.match.unit.play_unit`` takes as ``opener`` to play
    a unit's local seats with in-memory bots instead of processes.

    ``starts`` counts the bots it started, by name."""

    def __init__(self, scripts: Mapping[str, BotScript]) -> None:
        self.scripts = dict(scripts)
        self.starts: dict[str, int] = {}

    def __call__(
        self, spec: BotSpec, *, startup_ms: int, grace_ms: int = 0,
        stderr_path: Path | None = None, starved_cap: int = STARVED_WAIT_CAP,
    ) -> contextlib.AbstractAsyncContextManager[BotConnection]:
        self.starts[spec.name] = self.starts.get(spec.name, 0) + 1
        return open_memory_bot(spec.name, self.scripts[spec.name], startup_ms=startup_ms,
                               grace_ms=grace_ms, stderr_path=stderr_path,
                               starved_cap=starved_cap)
