"""Spawning and supervising one bot process.

A bot is any executable that speaks the protocol over its stdin and stdout.
:func:`referee.shell.spawn.open_bot_process` starts it and guarantees that, however the
``async with`` block is left (normally, by an exception, by Trio cancellation or by
``KeyboardInterrupt``), the bot and everything it forked are killed, and the bot itself
is reaped, before the block exits.

How the guarantee is kept:

* The bot starts in a new session, hence its own process group whose id is its pid.
  Cleanup stops the group (``SIGSTOP``: its leader forks nothing more), kills the
  leader's children by pid (one that leads a session of its own, such as the sandbox's
  pid 1, is out of the group's reach), sends ``SIGKILL`` to the whole group with
  :func:`os.killpg` (and to the bot's pid directly, in case it changed its group), then
  waits for the bot to be reaped and, briefly, for the rest of its session to die, all
  inside a shielded cancel scope. Descendants that moved to another process group
  (``setpgid``) are still in the bot's session: cleanup finds them in ``/proc`` and
  kills them too.
* No descriptors leak into the bot besides its standard streams (``close_fds``).
* stderr is drained continuously by a background task, so a chatty bot never blocks
  on a full pipe. Up to ``stderr_cap_bytes`` go to the log file; the rest is read and
  dropped, and one line ``[... stderr truncated after N bytes ...]`` marks the cut.
  The last few kilobytes are kept for crash reports (:meth:`BotProcess.stderr_tail`).
* Descendants of the bot may keep its pipes open after the bot itself has exited.
  Nothing here waits for those pipes to close: once the bot's own process has exited,
  a read that finds its stdout silent for :data:`EXIT_QUIET_S` reports end of file, a
  write fails with :class:`~referee.core.faults.BotCrashed`, and cleanup stops
  draining stderr after :data:`STDERR_DRAIN_S`.

If the referee itself is killed by SIGKILL, none of this runs. For that case every bot
has a guard (:mod:`referee.shell.guard`): a tiny process that kills the bot's group, its
children and its session when the referee disappears without having disarmed it. The
guard is started first; the bot's process tells it its group between ``fork`` and
``exec``, so the bot's program never runs unguarded, however early the referee dies.

Nothing here relies on a parent-death signal (``PR_SET_PDEATHSIG``, bwrap's
``--die-with-parent``): Trio forks every process from a cached worker *thread*, and the
kernel sends that signal when the forking thread ends, which an idle worker thread does
after 10 seconds, in the middle of a bot's game. The guard's lifeline is a pipe, whose
end the kernel closes only when the whole referee process is gone.

Limitation: a descendant that starts a session of its own (``setsid``) from a
grandchild of the bot is out of reach of both the cleanup and the guard. The sandbox
(:mod:`referee.shell.sandbox`) contains such bots: its pid 1 is the bot's child, and
its pid namespace dies with it.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
from typing import BinaryIO, Final, Literal

import trio

from referee.core import BotCommand, BotCrashed
from referee.shell.guard import GroupGuard
from referee.shell.limits import CgroupHandle
from referee.shell.proctable import alive, children_of, session_stragglers
from referee.shell.read_alarm import ReadAlarm

__all__ = [
    "DEFAULT_STDERR_CAP_BYTES",
    "EXIT_QUIET_S",
    "GROUP_EXIT_WAIT_S",
    "RECEIVE_CHUNK_BYTES",
    "STDERR_DRAIN_S",
    "BotProcess",
    "describe_exit_status",
]

DEFAULT_STDERR_CAP_BYTES: Final = 1 << 20
"""How much of a bot's stderr is written to its log file by default (1 MiB)."""

RECEIVE_CHUNK_BYTES: Final = 1 << 16
"""Default and typical size of one read from a pipe."""

EXIT_QUIET_S: Final = 0.05
"""After the bot's own process has exited, how long a read waits for data
before reporting end of file (only matters when a descendant still holds
the bot's stdout open)."""

STDERR_DRAIN_S: Final = 0.2
"""How long cleanup and :meth:`BotProcess.wait` wait for stderr to reach end
of file after the bot has exited."""

GROUP_EXIT_WAIT_S: Final = 0.5
"""Upper bound on how long cleanup waits for the bot's descendants (its group
and the rest of its session) to die after the kill (see :meth:`BotProcess.kill`)."""

_TAIL_BYTES: Final = 8192


def describe_exit_status(returncode: int | None) -> str:
    """Human-readable form of a return code, e.g. ``killed by signal SIGSEGV``."""
    if returncode is None:
        return "still running"
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"killed by signal {name}"


# --------------------------------------------------------------------------- errors

_BROKEN_IO: Final = (trio.BrokenResourceError, trio.ClosedResourceError, BrokenPipeError,
                     ConnectionResetError)


class _BotIO:
    """Translate pipe failures into :class:`BotCrashed`: the single mapping point.

    A plain class rather than a generator context manager: it wraps every read and
    write, and entering it should cost next to nothing."""

    __slots__ = ("action",)

    def __init__(self, action: str) -> None:
        self.action = action

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> Literal[False]:
        if exc is None or not isinstance(exc, _BROKEN_IO):
            return False
        cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
        raise BotCrashed(f"{self.action}: {type(cause).__name__}: {cause}") from exc


_WRITING: Final = _BotIO("cannot write to the bot's stdin")
_READING: Final = _BotIO("cannot read the bot's stdout")


# --------------------------------------------------------------------------- process


class BotProcess:
    """A running bot. Obtain one from :func:`referee.shell.spawn.open_bot_process`.

    At most one task may call :meth:`send` at a time, and at most one
    :meth:`receive_some`.
    """

    def __init__(
        self,
        command: BotCommand,
        process: trio.Process,
        log: BinaryIO | None,
        stderr_cap_bytes: int,
        *,
        guard: GroupGuard | None = None,
        cgroup: CgroupHandle | None = None,
    ) -> None:
        stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
        assert stdin is not None and stdout is not None and stderr is not None
        # Written to and read from directly, see send() and receive_some().
        assert isinstance(stdin, trio.lowlevel.FdStream)
        assert isinstance(stdout, trio.lowlevel.FdStream)
        self.command, self._process = command, process
        self._stdin, self._stdout, self._stderr = stdin, stdout, stderr
        self._log, self._cap = log, stderr_cap_bytes
        self._logged = self._stderr_total = 0
        self._log_ends_line = True
        self._tail = bytearray()
        self._stderr_done = trio.Event()
        self._alarm = ReadAlarm(stdout.fileno())  # times the reads out
        self._stdout_poll = select.poll()  # for readable_now, registered once
        self._stdout_poll.register(stdout.fileno(), select.POLLIN)
        self._write_scope: trio.CancelScope | None = None
        # Service tasks run in scopes shielded from outside cancellation; only
        # cleanup stops them, so they never contribute exceptions of their own.
        self._pump_scope = trio.CancelScope(shield=True)
        self._watch_scope = trio.CancelScope(shield=True)
        self._closed = False
        self._returncode: int | None = None
        #: The watchdog that kills the bot's group if the referee dies (None: none could
        #: be started).
        self.guard = guard
        self._cgroup = cgroup
        #: Set once the referee waits for the bot's exit (:meth:`wait`): its rationing
        #: (of ``sysinfo`` answers) ends, so that nothing of it holds the exit up.
        self.exiting = trio.Event()

    def __repr__(self) -> str:
        return f"<BotProcess pid={self.pid} {self.command.display!r}: {self.status()}>"

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """Exit status once the bot's exit has been seen (negative: killed by that
        signal), else None.

        Costs no system call, as it is read before every request: the exit is seen
        by a watcher task as soon as Trio runs it after the process ends, and by
        :meth:`wait`, :meth:`kill` and :meth:`poll`."""
        return self._returncode

    def poll(self) -> int | None:
        """Ask the operating system whether the bot has exited; its exit status or None."""
        code = self._process.returncode
        if code is not None:
            code = self._returncode = self.exit_status(code)
        return code

    def exit_status(self, code: int) -> int:
        """The bot's exit status, from that of the process the referee started (the
        same here; a wrapper's says it otherwise: ``WrappedBotProcess``)."""
        return code

    def status(self) -> str:
        """E.g. ``running``, ``exited with status 1``, ``killed by signal SIGKILL``, or
        ``exceeded its memory limit of 256 MiB (killed by signal SIGKILL)``."""
        code = self.returncode
        if code is None:
            return "running"
        cgroup = self._cgroup
        if cgroup is not None and cgroup.memory_killed():
            return (f"exceeded its memory limit of {cgroup.limits.memory_mb} MiB"
                    f" ({describe_exit_status(code)})")
        return describe_exit_status(code)

    @property
    def stderr_bytes(self) -> int:
        """Total bytes read from the bot's stderr so far (logged or not)."""
        return self._stderr_total

    def stderr_tail(self, max_lines: int = 20) -> str:
        """The last lines the bot wrote to stderr (from the last few KiB)."""
        text = self._tail.decode("utf-8", errors="replace")
        lines = text.splitlines()
        if len(self._tail) >= _TAIL_BYTES and len(lines) > 1:
            lines = lines[1:]  # the first line is probably cut
        return "\n".join(lines[-max_lines:]) if max_lines > 0 else ""

    async def send(self, data: bytes, timeout_s: float = math.inf) -> float:
        """Write all of ``data`` to the bot's stdin.

        Returns the time (on Trio's clock) just before the first byte was handed to the
        pipe. What the pipe accepts at once is written right away, without yielding to
        other tasks first: that time is then not moved by whatever else the referee
        runs, and a message that fits in the pipe (the usual case) costs a single
        system call.

        Raises :class:`BotCrashed` if the bot has exited or its stdin is broken, and
        :class:`trio.TooSlowError` if the rest of ``data`` could not be written within
        ``timeout_s`` (part of it may have been).
        """
        if self.returncode is not None:
            raise BotCrashed(f"cannot write to the bot: {self.status()}")
        started = trio.current_time()
        with _WRITING:
            written = self._write_now(data)
        if written == len(data):
            return started
        with trio.CancelScope(deadline=started + timeout_s) as scope:
            self._write_scope = scope
            try:
                with _WRITING:
                    await self._stdin.send_all(memoryview(data)[written:])
                return started
            finally:
                self._write_scope = None
        if self.poll() is None:
            raise trio.TooSlowError
        raise BotCrashed(f"the bot stopped before reading its input ({self.status()})")

    def _write_now(self, data: bytes) -> int:
        """Write what the (non-blocking) pipe accepts right now; how much that was."""
        fd = self._stdin.fileno()
        if fd < 0:
            raise trio.ClosedResourceError("the bot's stdin is closed")
        try:
            return os.write(fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:  # as Trio's own send_all reports it
            raise trio.BrokenResourceError(str(exc)) from exc

    async def receive_some(
        self, max_bytes: int = RECEIVE_CHUNK_BYTES, *, deadline: float = math.inf
    ) -> bytes:
        """Read up to ``max_bytes`` from the bot's stdout; ``b""`` means end of file.

        End of file is also reported once the bot's own process has exited and its
        stdout stayed silent for :data:`EXIT_QUIET_S`, even if a descendant still holds
        the pipe open. Raises :class:`trio.TooSlowError` when nothing arrived by
        ``deadline`` (Trio's clock), :class:`BotCrashed` if the stream is broken or closed.

        One timer serves both limits, and every read (``referee.shell.read_alarm``: a
        cancel scope per read costs more than the rest of it): the exit watcher brings
        its deadline forward when the bot exits.
        """
        limit = deadline
        if self.returncode is not None:
            limit = min(deadline, trio.current_time() + EXIT_QUIET_S)
        try:
            with _READING:
                return await self._read(max_bytes, limit)
        except trio.TooSlowError:
            if self._alarm.rang_at < deadline:  # brought forward: it exited, went quiet
                return b""
            raise

    async def _read(self, max_bytes: int, deadline: float) -> bytes:
        """Wait until the pipe is readable, then read it: one pass through Trio's
        scheduler per read (its stream would make two, plus a read that fails)."""
        fd = self._stdout.fileno()
        if fd < 0:
            raise trio.ClosedResourceError("the bot's stdout is closed")
        while True:
            await self._alarm.wait_readable(deadline)
            try:
                return os.read(fd, max_bytes)
            except BlockingIOError:  # woken up for nothing: wait again
                continue
            except OSError as exc:  # as Trio's own receive_some reports it
                raise trio.BrokenResourceError(str(exc)) from exc

    def readable_now(self) -> bool:
        """Whether the bot's stdout has bytes (or its end) waiting, without waiting."""
        return self._stdout.fileno() >= 0 and bool(self._stdout_poll.poll(0))

    async def close_input(self) -> None:
        """Close the bot's stdin so that it reads end of file."""
        await self._stdin.aclose()

    async def wait(self) -> int:
        """Wait for the bot to exit and its stderr to be drained; return the exit status.

        The stderr drain is bounded by :data:`STDERR_DRAIN_S`.
        """
        self.exiting.set()
        code = self._returncode = self.exit_status(await self._process.wait())
        with trio.move_on_after(STDERR_DRAIN_S):
            await self._stderr_done.wait()
        return code

    async def kill(self) -> None:
        """Kill the bot's whole process group and wait for the bot to be reaped.

        Also kills the rest of its session, and waits, at most
        :data:`GROUP_EXIT_WAIT_S`, for all of it to die. Idempotent.
        """
        await self._kill_and_reap()
        if self.guard is not None:
            self.guard.disarm()

    # ----------------------------------------------------------------- internals

    async def _kill_and_reap(self) -> None:
        """The one kill sequence: the group and the leader's children, the bot reaped,
        the rest of its session."""
        children = self._kill_group()
        self._returncode = self.exit_status(await self._process.wait())
        await self._clear_session(children)

    def _kill_group(self) -> list[int]:
        """Kill the bot's group, and first its leader's children; those children.

        The group is stopped first, so that its leader forks nothing more while its
        children are looked up: a child that leads a session of its own (the sandbox's
        pid 1, whose death ends its whole pid namespace) is out of the group's reach,
        and is killed by its pid."""
        children = []
        if self.poll() is None:  # not reaped: its pid is still the bot's
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGSTOP)
            children = children_of(self.pid)
            for child in children:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(child, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.poll() is None:  # it may have left its group
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
        return children

    async def _clear_session(self, children: list[int]) -> None:
        """Kill what is left of the reaped bot's session and give it, and the
        ``children`` killed with the group, a moment to die.

        The group kill already hit the bot's group; this also reaches descendants
        that moved to another group of the session. ``SIGKILL`` takes effect
        asynchronously; waiting (briefly, bounded by :data:`GROUP_EXIT_WAIT_S`)
        means that once cleanup returns, nothing the bot forked is still consuming
        CPU, and a sandbox's pid namespace is gone. One scan of ``/proc`` (well under a
        millisecond on a machine with a hundred processes) for a bot that did not fork.
        """
        deadline = trio.current_time() + GROUP_EXIT_WAIT_S
        while (stragglers := session_stragglers(self.pid)) or (
            children := [pid for pid in children if alive(pid)]
        ):
            for pid in stragglers:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if trio.current_time() >= deadline:
                return
            await trio.sleep(0.002)

    def start_services(self, nursery: trio.Nursery) -> None:
        """Drain stderr, watch for the exit and time the reads out, in tasks of
        ``nursery`` that never raise."""
        nursery.start_soon(self._pump_stderr, name=f"bot {self.pid} stderr")
        nursery.start_soon(self._watch_exit, name=f"bot {self.pid} exit watcher")
        nursery.start_soon(self._alarm.run, name=f"bot {self.pid} read alarm")

    async def _watch_exit(self) -> None:
        with self._watch_scope:
            self._returncode = self.exit_status(await self._process.wait())
            # Give any read or write in progress a short while to finish, then
            # stop it even if a descendant still holds the pipe.
            quiet_until = trio.current_time() + EXIT_QUIET_S
            self._alarm.bring_forward(quiet_until)
            if self._write_scope is not None:
                self._write_scope.deadline = min(self._write_scope.deadline, quiet_until)

    async def _pump_stderr(self) -> None:
        with self._pump_scope:
            try:
                while True:
                    try:
                        chunk = await self._stderr.receive_some(RECEIVE_CHUNK_BYTES)
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        break
                    if not chunk:
                        break
                    self._record_stderr(chunk)
            finally:
                self._close_log()
                self._stderr_done.set()

    def _record_stderr(self, chunk: bytes | bytearray) -> None:
        self._stderr_total += len(chunk)
        self._tail += chunk
        del self._tail[:-_TAIL_BYTES]
        if self._log is None:
            return
        room = self._cap - self._logged
        # Local file writes go to the page cache and do not block for long;
        # with at most `cap` bytes per bot, a thread per write is not worth it.
        try:
            if room > 0:
                kept = chunk[:room]
                self._log.write(kept)
                self._logged += len(kept)
                self._log_ends_line = kept.endswith(b"\n")
            if len(chunk) > room:
                newline = b"" if self._log_ends_line else b"\n"
                note = f"[... stderr truncated after {self._cap} bytes ...]\n".encode()
                self._log.write(newline + note)
                self._close_log()
            else:
                self._log.flush()
        except OSError:  # disk full or similar: stop logging, keep draining
            self._close_log()

    def _close_log(self) -> None:
        log, self._log = self._log, None
        if log is not None:
            with contextlib.suppress(OSError):
                log.close()

    @trio.lowlevel.enable_ki_protection
    async def aclose(self) -> None:
        """Kill the group, reap the bot, stop the service tasks. Idempotent."""
        if self._closed:
            return
        await self._kill_and_reap()
        if self.guard is not None:
            await self.guard.close()
        with trio.move_on_after(STDERR_DRAIN_S):
            await self._stderr_done.wait()
        self._pump_scope.cancel()
        self._watch_scope.cancel()
        self._alarm.stop()
        for stream in (self._stdin, self._stdout, self._stderr):
            await stream.aclose()
        self._close_log()
        if self._cgroup is not None:
            self._cgroup.remove()
        self._closed = True


