"""A bot on the other end of a pipe or a socket: the protocol codec over a transport.

``BotConnection`` turns everything that can go wrong with a bot into a typed
:class:`~referee.core.faults.BotFault`: silence past the deadline is ``BotTimeout``, a dead
process, pipe or connection is ``BotCrashed``, bytes that break the protocol are
``BotProtocolError``. Trio's and the OS's own exceptions never leave this module.

The transport is anything with the interface of :class:`BotTransport`: a local bot
process (:class:`~referee.shell.process.BotProcess`), a remote bot's connection
(:class:`~referee.shell.remote.StreamTransport`) or a bot that lives in memory
(:class:`~referee.testing.MemoryTransport`). Each maps its own I/O errors to
:class:`~referee.core.faults.BotCrashed`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Protocol, cast

import trio
from taki_protocol import (
    EOF,
    NEED_DATA,
    Answer,
    BotHello,
    Codec,
    Decide,
    Error,
    ForfeitReason,
    Hello,
    Message,
    ProtocolError,
    React,
    RepeatedAnswerError,
    Sentinel,
    Shutdown,
)

from referee import __version__
from referee.core import (
    CPU_WALL_CAP,
    EXIT_SEEN_MS,
    GOODBYE_MS,
    SHUTDOWN_WAIT_MS,
    STARVED_WAIT_CAP,
    BotCrashed,
    BotFault,
    BotProtocolError,
    BotSpec,
    BotTimeout,
    TimeBasis,
    Verdict,
    WaitPolicy,
    WaitTimeout,
    scaled_s,
)
from referee.shell.cputime import CpuMeter, load_per_cpu
from referee.shell.process import RECEIVE_CHUNK_BYTES
from referee.shell.sandbox import WrappedBotProcess
from referee.shell.spawn import open_bot_process
from referee.shell.waits import WaitWatch, timed_receive

REFEREE_ID = f"taki-referee {__version__}"


class BotTransport(Protocol):
    """What a :class:`BotConnection` needs from the bot's end of the byte stream.

    At most one task may call :meth:`send` at a time, and at most one
    :meth:`receive_some`. Failures of the underlying stream raise
    :class:`~referee.core.faults.BotCrashed`, never Trio's or the OS's exceptions.
    """

    @property
    def returncode(self) -> int | None:
        """None while the bot can be talked to; set once it is gone (a process's exit
        status; 0 for a closed connection)."""

    def status(self) -> str:
        """How the bot is doing, to follow "the bot ", e.g. ``exited with status 1``."""

    def stderr_tail(self, max_lines: int = 20) -> str:
        """The last lines of the bot's stderr, when the transport sees it ("" otherwise)."""

    async def send(self, data: bytes, timeout_s: float = math.inf) -> float:
        """Write all of ``data``; returns the time (Trio's clock) the write began.
        Raises BotCrashed, or :class:`trio.TooSlowError` past ``timeout_s``."""

    async def receive_some(
        self, max_bytes: int = RECEIVE_CHUNK_BYTES, *, deadline: float = math.inf
    ) -> bytes:
        """Some bytes from the bot; ``b""`` at the end of its output. Raises
        :class:`trio.TooSlowError` when nothing arrived by ``deadline`` (Trio's clock)."""

    def readable_now(self) -> bool:
        """Whether bytes from the bot (or the end of its output) are waiting to be read,
        without waiting: one ``select`` with no timeout."""

    async def close_input(self) -> None:
        """Tell the bot nothing more will be written (it reads end of file) while its
        output stays open, when the transport can (a process's stdin is closed); else
        do nothing. Raises BotCrashed when the stream is broken."""

    async def wait(self) -> int:
        """Wait until the bot is gone (exited, or closed its connection)."""

    async def kill(self) -> None:
        """Stop the bot (kill the process, close the connection). Idempotent."""


class BotConnection:
    """The conversation with one running bot, over its transport."""

    def __init__(self, name: str, process: BotTransport) -> None:
        self.name = name
        #: The transport: a BotProcess for a local bot (hence the name), a
        #: StreamTransport for a remote one.
        self.process = process
        self.codec = Codec("referee")
        self.bot_name: str | None = None
        self.fault: BotFault | None = None
        self._next_id = 0
        #: Reads the CPU time of the bot's processes (a local bot's), else None.
        self.cpu: CpuMeter | None = None
        #: What the fixed waits of the conversation are multiplied by (``check --slack``).
        self.slack = 1.0
        #: The last wait for the bot's exit after ``error`` or ``shutdown``, in seconds.
        self.exit_wait_s = 0.0
        #: The rules of the bot's timed waits, reset for each (one wait at a time).
        self._policy = WaitPolicy(start=0.0, span_ms=0.0, told_ms=0.0, watched=False)

    def wait_s(self, base_ms: int) -> float:
        """One of the conversation's fixed waits (``referee.core.margins``), in seconds:
        scaled by the slack and the host's load now."""
        return scaled_s(base_ms, self.slack, load_per_cpu())

    @property
    def alive(self) -> bool:
        """False once the bot faulted, its process exited, or the conversation ended
        (``error`` or ``shutdown`` was sent: no game may follow)."""
        return self.fault is None and self.process.returncode is None and not self.codec.finished

    def describe_exit(self) -> str:
        """How the bot ended, e.g. ``the bot exited with status 1`` or ``the bot was
        killed by signal SIGSEGV``."""
        status = self.process.status()
        was = "was " if status.startswith("killed") else ""
        return f"the bot {was}{status}"

    def crashed(self, what: str | None = None) -> BotCrashed:
        """The fault of a bot that is gone: ``what`` happened (if given), then how the
        bot ended. The bots are told only that; the detail kept in results, replays and
        logs adds the bot's last stderr lines."""
        if what is None:
            public = self.describe_exit()
        elif self.process.returncode is None:  # closed its output but still runs
            public = what
        else:
            public = f"{what}: {self.describe_exit()}"
        tail = self.process.stderr_tail(5)
        detail = public + (f"; its last stderr lines:\n{tail}" if tail else "")
        return BotCrashed(detail, public=public)

    async def send(self, message: Message, timeout_s: float | None = None) -> float:
        """Write one message; a dead bot raises BotCrashed, a full pipe past
        ``timeout_s`` raises BotTimeout. Returns the time (Trio's clock) the write
        began."""
        data = self.codec.send(message)
        try:
            return await self.process.send(data, math.inf if timeout_s is None else timeout_s)
        except trio.TooSlowError:
            # Part of the message may have been written: nothing can follow it, so the
            # connection is done for, whatever the fault policy.
            fault = BotTimeout(f"the bot did not read its input within {timeout_s:.3f} s")
            self.fault = self.fault or fault
            raise fault from None

    async def receive(self, deadline: float = math.inf) -> Message:
        """The next message from the bot. Raises :class:`trio.TooSlowError` when it is
        not complete by ``deadline`` (Trio's clock)."""
        while True:
            try:
                message = self.codec.next_message()
            except ProtocolError as exc:
                raise BotProtocolError(str(exc)) from None
            if message is NEED_DATA:
                data = await self.process.receive_some(deadline=deadline)
                try:
                    self.codec.receive_data(data)
                except ProtocolError as exc:
                    raise BotProtocolError(str(exc)) from None
                continue
            if message is EOF:
                await self._wait_exit()
                raise self.crashed("closed its output")
            assert not isinstance(message, type(EOF))
            return message

    async def _wait_exit(self) -> None:
        # Shielded: a request deadline passing meanwhile must not turn the crash that
        # was already seen into a timeout.
        with trio.CancelScope(shield=True), trio.move_on_after(self.wait_s(EXIT_SEEN_MS)):
            await self.process.wait()

    async def handshake(self, startup_ms: int, grace_ms: int = 0,
                        starved_cap: int = STARVED_WAIT_CAP) -> BotHello:
        """Send hello and wait for the bot's hello within the startup time (plus
        ``grace_ms``).

        A local bot's start is watched from its start and judged by the start-up rules
        of ``referee.core.waiting``: the time it is charged is the more of the CPU time
        its processes used and the wait less the time the machine kept them off the
        CPU, up to ``starved_cap`` times the startup time of wall time; a start that
        timed out raises :class:`~referee.core.waiting.WaitTimeout` whose detail names
        that allowance, with the figures, for the game to judge whose fault it was. A
        bot whose CPU time cannot be read has the startup time of wall time."""
        span_ms = startup_ms + grace_ms
        watch = None if self.cpu is None else WaitWatch(self.cpu, fresh=True)
        if watch is not None:
            watch.arm()
        try:
            start = await self.send(Hello(referee=REFEREE_ID), span_ms / 1000)
        except BotTimeout:
            raise BotTimeout(f"no hello within the startup time of {startup_ms} ms") from None
        policy = self._policy
        policy.reset(start=start, span_ms=span_ms, told_ms=startup_ms,
                     watched=watch is not None, starved_cap=starved_cap, startup=True)
        reply, verdict = await timed_receive(self, policy, watch)
        if reply is None:
            detail = verdict.detail if policy.startup else \
                f"no hello within the startup time of {startup_ms} ms"
            raise WaitTimeout(detail, verdict.figures)
        if not isinstance(reply, BotHello):
            raise BotProtocolError(f"expected bot_hello, got {reply.TYPE}")
        self.bot_name = reply.name
        return reply

    async def answer_hello(self, received: bytes, timeout_s: float) -> BotHello:
        """The handshake of a remote bot, which speaks first: ``received`` holds its
        ``bot_hello`` (read and checked before the connection was accepted), to which
        the referee answers with ``hello``."""
        try:
            self.codec.receive_data(received)
            reply = self.codec.next_message()
        except ProtocolError as exc:
            raise BotProtocolError(str(exc)) from None
        if not isinstance(reply, BotHello):
            raise BotProtocolError(f"expected bot_hello, got {reply}")
        self.bot_name = reply.name
        await self.send(Hello(referee=REFEREE_ID), timeout_s)
        return reply

    async def check_idle(self, wait_s: float = 0.002) -> bool:
        """Whether a bot that owes no answer is still there: reads, for at most
        ``wait_s``, what it sent meanwhile (late answers are dropped). A bot found gone,
        or one that sent anything else, is marked with its fault and stopped.

        Only for a bot nobody else is reading from, between games."""
        if not self.alive:
            return False
        fault: BotFault | None = None
        with trio.move_on_after(wait_s):
            try:
                data = await self.process.receive_some()
                self.codec.receive_data(data)
                message = self.codec.next_message()
            except ProtocolError as exc:
                fault = BotProtocolError(str(exc))
            except BotFault as exc:
                fault = exc
            else:
                if message is EOF:
                    fault = self.crashed("closed its output")
                elif not isinstance(message, Sentinel):
                    fault = BotProtocolError(f"unsolicited {message.TYPE!r} message between games")
        if fault is not None:
            self.fault = self.fault or fault
            await self.process.kill()
        return self.alive

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def request(
        self,
        message: Decide | React,
        deadline_ms: int,
        *,
        basis: TimeBasis = TimeBasis.WALL,
        watch: WaitWatch | None = None,
        starved_cap: int = STARVED_WAIT_CAP,
    ) -> Verdict:
        """Send a request and wait for its answer until the deadline: ``deadline_ms``
        enforces the request's own ``deadline_ms`` (the time the bot was told it has)
        plus the grace. Returns the verdict of the wait (``referee.core.waiting``),
        which carries the answer (``answer``, never None here) and the time the bot is
        charged (``charged_ms``); a wait that ended without an answer raises
        :class:`~referee.core.waiting.WaitTimeout`, with the figures to judge whose
        fault it was when it may be the machine's.

        Under the wall basis the time is measured on the monotonic clock from the moment
        the request was handed to the pipe to the moment the answer was complete (or
        the referee meant to look, when it ran late), less the extensions of a starved
        wait. (Taking the start after the write instead would leave out any time the
        referee is preempted right after it, typically by the bot it just woke up on a
        busy machine.) Under the CPU basis (a bot whose CPU time can be read) the time
        is the CPU time the bot's processes used.

        ``watch`` (None: the wait is not judged) samples the bot, the game's other bots
        and the host from the wait's check point on (``referee.shell.waits``)."""
        if self.codec.buffered or self.process.readable_now():
            await self._refuse_unsolicited(message.TYPE)
        meter = self.cpu if basis is TimeBasis.CPU else None
        used = before = None
        if meter is not None:
            before = meter.quick()
            used = meter.used_since(before)
        if watch is not None:
            watch.arm(before)  # the cheap reading: its CPU time since the request
        cap_ms = deadline_ms * (CPU_WALL_CAP if meter is not None else 1)
        start = await self.send(message, timeout_s=cap_ms / 1000)
        policy = self._policy
        policy.reset(start=start, span_ms=deadline_ms, told_ms=message.deadline_ms,
                     watched=watch is not None, metered=meter is not None, basis=basis,
                     starved_cap=starved_cap)
        reply, verdict = await timed_receive(self, policy, watch, used)
        if reply is None:
            raise WaitTimeout(verdict.detail, verdict.figures)
        if not isinstance(reply, Answer):
            raise BotProtocolError(f"expected an action, got {reply.TYPE}")
        return Verdict(verdict.answered, verdict.charged_ms, verdict.detail, verdict.figures,
                       reply)

    async def _refuse_unsolicited(self, what: str) -> None:
        """Raise BotProtocolError when the bot wrote a message before the request that it
        answers was written: an answer sent ahead (request ids are easy to guess), or
        anything sent after ``game_over``. Its bytes are already in the pipe or socket
        when the request is about to go out; a late answer to a request the referee gave
        up on is still dropped by the codec. :meth:`request` calls it only when bytes
        wait (one ``poll`` tells), so that nothing else is spent when none do."""
        data: bytes | None = None
        if self.process.readable_now():
            # Readable, yet no bytes for us within 10 ms (a TLS record, say): nothing sent.
            with contextlib.suppress(trio.TooSlowError):
                data = await self.process.receive_some(deadline=trio.current_time() + 0.01)
        try:
            if data is not None:
                self.codec.receive_data(data)  # b"": the end of the bot's output
            # Also what came in one read with the previous answer and waits in the codec.
            message = self.codec.next_message()
        except RepeatedAnswerError as exc:
            raise BotProtocolError(str(exc)) from None  # nothing early: an answer twice
        except ProtocolError as exc:
            raise BotProtocolError(f"{exc} (sent before the {what!r} request)") from None
        if message is EOF:
            await self._wait_exit()
            raise self.crashed("closed its output")
        if not isinstance(message, Sentinel):
            raise BotProtocolError(f"unsolicited {message.TYPE!r} message before the"
                                   f" {what!r} request")

    def abandon_request(self) -> None:
        """Give up on the open request (its answer came too late): a late answer that
        still arrives is discarded."""
        self.codec.abandon_request()

    async def fail(self, fault: BotFault) -> None:
        """Tell the bot why it forfeits (when its input is still open), then stop it.

        After the ``error`` message the bot's input is closed (``close_input`` of the
        transport), and the bot has what is left of its goodbye time (``GOODBYE_MS``
        scaled, ``referee.core.margins``) to read the message and exit by itself
        (PROTOCOL.md, section 3.6), so that the message reaches it before the kill does."""
        cut = self.fault is not None  # only a send that timed out sets it before
        self.fault = fault
        if self.process.returncode is None and not cut:
            goodbye_s = self.exit_wait_s = self.wait_s(GOODBYE_MS)
            goodbye_by = trio.current_time() + goodbye_s
            with contextlib.suppress(BotFault, ProtocolError):
                reason = cast(ForfeitReason, fault.reason)
                message = Error(reason=reason, message=fault.public_detail)
                await self.send(message, goodbye_s)
                with trio.move_on_at(goodbye_by):
                    await self.process.close_input()
                    await self.process.wait()
        await self.process.kill()

    async def shutdown(self) -> None:
        """Say goodbye to a healthy bot and give it ``SHUTDOWN_WAIT_MS`` (scaled,
        ``referee.core.margins``) to exit by itself (PROTOCOL.md, section 3.6); the
        caller's cleanup kills what remains. A bot still thinking over a request (a run
        interrupted, or a coordinator gone) would read ``shutdown`` only after its answer:
        it is not waited for, the cleanup stops it at once."""
        if self.alive and not self.codec.finished and self.codec.open_request is None:
            self.exit_wait_s = self.wait_s(SHUTDOWN_WAIT_MS)
            with contextlib.suppress(BotFault, ProtocolError):
                await self.send(Shutdown(), self.wait_s(GOODBYE_MS))
                with trio.move_on_after(self.exit_wait_s):
                    await self.process.wait()


@contextlib.asynccontextmanager
async def open_bot(
    spec: BotSpec, *, startup_ms: int, grace_ms: int = 0, stderr_path: Path | None = None,
    connection: Callable[[str, BotTransport], BotConnection] = BotConnection,
    slack: float = 1.0,
    starved_cap: int = STARVED_WAIT_CAP,
) -> AsyncIterator[BotConnection]:
    """Start a bot and complete the handshake. A bot that cannot even start
    (missing executable) raises BotStartError; one that starts but fails the
    handshake yields a connection whose ``fault`` is set. The bot has ``startup_ms``,
    plus ``grace_ms`` of slack, to answer ``hello``. ``connection`` makes the
    connection (a subclass of BotConnection may observe the conversation); ``slack``
    multiplies the conversation's fixed waits (``referee.core.margins``); a start the
    machine starves is extended up to ``starved_cap`` times (:meth:`BotConnection.handshake`)."""
    command = spec.local_command()
    async with open_bot_process(command, stderr_path=stderr_path) as process:
        conn = connection(spec.name, process)
        conn.cpu = meter = CpuMeter(process.pid, niceness=command.limits.niceness or 0,
                                    wrapped=isinstance(process, WrappedBotProcess))
        conn.slack = slack
        try:
            async with bot_session(conn, startup_ms=startup_ms, grace_ms=grace_ms,
                                   starved_cap=starved_cap):
                yield conn
        finally:
            meter.close()


@contextlib.asynccontextmanager
async def bot_session(
    conn: BotConnection, *, startup_ms: int, grace_ms: int = 0,
    starved_cap: int = STARVED_WAIT_CAP,
) -> AsyncIterator[BotConnection]:
    """The conversation with a started bot, whatever carries it (a process, an
    in-memory bot): the handshake first (a bot that fails it yields ``conn`` with its
    ``fault`` set), then the body, then, shielded from cancellation, the shutdown."""
    try:
        await conn.handshake(startup_ms, grace_ms, starved_cap)
    except BotFault as fault:
        await conn.fail(fault)
    try:
        yield conn
    finally:
        with trio.CancelScope(shield=True):
            await conn.shutdown()
