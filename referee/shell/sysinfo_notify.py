"""``sysinfo(2)`` answered by the referee, with figures that never change.

``sysinfo`` tells a process the host's free memory, its number of processes and its
loads: two bots of one game could pass each other bits through them (one starts
threads or allocates memory, the other reads the count). The call cannot be denied:
glibc answers ``sysconf(_SC_PHYS_PAGES)`` with it and uses the answer unchecked, and
the JVM, .NET and Go size their heaps from that. So every bot run under bwrap
(sandboxed or contained) is started under a second filter of one rule
(:func:`referee.shell.seccomp.notify_program`): ``sysinfo`` goes to the referee
(``SECCOMP_RET_USER_NOTIF``, the kernel's "user notification", as LXD answers it for
its containers), which writes fixed figures into the caller's buffer
(:class:`Figures`): the bot's memory limit as its total and free memory (the host's
total when it has none), no load, one process, no swap; only the uptime is the host's.

How: between fork and exec, the bot's process sets ``no_new_privs`` (bwrap sets it
anyway, and it is not set-uid), installs the filter with
``SECCOMP_FILTER_FLAG_NEW_LISTENER`` and sends the listener's descriptor to the referee
over a socket pair (``SCM_RIGHTS``). Everything it starts (bwrap, the bot, their
children) inherits the filter. The referee serves the listener from a task beside the
bot (:func:`serve`): it receives a notification, opens the caller's
``/proc/PID/mem``, checks that the notification is still alive (so the pid was not
reused), writes the figures at the caller's pointer (from a worker thread: the page may
have to come back from swap), and answers "0". A notification
whose pid the referee cannot see, or whose pointer it cannot write, is answered with
``ENOSYS`` or ``EFAULT``; one whose caller is gone, with ``ENOSYS`` (which reaches no
one): none is left unanswered. The pointer is read as the kernel reads it (the lower
32 bits of a 32-bit call's). Once the referee's descriptor is closed (the bot is being
closed, or the referee is gone), the kernel fails every ``sysinfo`` with ``ENOSYS``
at once: no call ever waits for a referee that is not there.

The cost is one socket pair and one system call per bot start, and one idle task per
bot; runtimes call ``sysinfo`` a few times at start, never per move. An answer costs
the referee some 100-200 microseconds of CPU, so a bot that calls ``sysinfo`` in a loop
would take the referee's time from the other bots: each bot gets :data:`BURST` answers
at once and :data:`RATE` a second after that; its further calls wait (in the kernel,
costing nothing) for their turn.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import os
import select
import socket
import struct
import time
from typing import Any, Final

import attrs
import trio

from referee.core import ResourceLimits
from referee.shell.seccomp import SeccompUnavailable, notify_program, syscall_number

__all__ = ["BURST", "PROCS", "RATE", "Figures", "SysinfoNotifier", "figures_for",
           "require_notification", "serve"]

#: The number of processes every bot is told.
PROCS: Final = 1
MIB: Final = 1 << 20
#: Answers a bot gets at once, and a second after that: a JVM's compiler threads ask
#: about 80 times in its busiest second (a JIT asks before it adds a thread), and never
#: wait; a bot that asks without end costs the referee a few per cent of one CPU.
BURST: Final = 400
RATE: Final = 200.0

# <linux/seccomp.h>, <linux/prctl.h>, <linux/audit.h>.
_PR_SET_NO_NEW_PRIVS: Final = 38
_SET_MODE_FILTER: Final = 1
_GET_ACTION_AVAIL: Final = 2
_RET_USER_NOTIF: Final = 0x7FC00000
_FLAG_NEW_LISTENER: Final = 1 << 3
#: No speculation mitigation for this filter: bwrap's own filter (installed without the
#: flag) turns on what the host's policy asks for before the bot starts, as before.
_FLAG_SPEC_ALLOW: Final = 1 << 2
#: struct seccomp_notif: id, pid, flags, then struct seccomp_data (nr, arch,
#: instruction_pointer, args[6]): 80 bytes.
_NOTIF: Final = struct.Struct("<QIIiIQ6Q")
#: struct seccomp_notif_resp: id, val, error, flags: 24 bytes.
_RESP: Final = struct.Struct("<QqiI")
_IOCTL_RECV: Final = 0xC0000000 | _NOTIF.size << 16 | ord("!") << 8 | 0
_IOCTL_SEND: Final = 0xC0000000 | _RESP.size << 16 | ord("!") << 8 | 1
_IOCTL_ID_VALID: Final = 0x40000000 | 8 << 16 | ord("!") << 8 | 2
#: The number Linux 5.0-5.6 knew it by (_IOR: later kernels still take it).
_IOCTL_ID_VALID_OLD: Final = 0x80000000 | 8 << 16 | ord("!") << 8 | 2
_AUDIT_ARCH_64BIT: Final = 0x80000000
#: struct sysinfo of a 64-bit process (x86-64 and x32 alike): uptime, loads[3],
#: totalram, freeram, sharedram, bufferram, totalswap, freeswap, procs, pad,
#: totalhigh, freehigh, mem_unit, padding: 112 bytes.
_SYSINFO_64: Final = struct.Struct("<q3Q6QHH4x2QI4x")
#: The 32-bit one (``int 0x80``): the same fields in 32 bits, 64 bytes.
_SYSINFO_32: Final = struct.Struct("<i3I6IHH2II8x")
_U32: Final = (1 << 32) - 1
_PAGE: Final = 4096


@attrs.frozen
class Figures:
    """What ``sysinfo`` tells a bot."""

    #: Total and free memory, in bytes.
    totalram: int
    procs: int = PROCS

    def packed(self, arch: int, uptime: int) -> bytes:
        """The ``struct sysinfo`` of a caller of architecture ``arch`` (an
        ``AUDIT_ARCH_*`` value), with the host's ``uptime`` in seconds."""
        if arch & _AUDIT_ARCH_64BIT:
            return _SYSINFO_64.pack(uptime, 0, 0, 0, self.totalram, self.totalram, 0, 0,
                                    0, 0, self.procs, 0, 0, 0, 1)
        unit = 1 if self.totalram <= _U32 else _PAGE  # the kernel's compat call scales too
        ram = min(self.totalram // unit, _U32)
        return _SYSINFO_32.pack(min(uptime, (1 << 31) - 1), 0, 0, 0, ram, ram, 0, 0, 0, 0,
                                self.procs, 0, 0, 0, unit)


@functools.cache
def _host_total() -> int:
    """The host's memory, once per referee process (it never changes)."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def figures_for(limits: ResourceLimits) -> Figures:
    """A bot's figures: its memory limit as its memory, else the host's."""
    return Figures(limits.memory_mb * MIB if limits.memory_mb is not None else _host_total())


@functools.cache
def _libc_calls() -> tuple[Any, Any]:
    """The C library's ``syscall`` and ``prctl``, looked up once."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall, libc.prctl


@functools.cache
def require_notification() -> None:
    """SeccompUnavailable when the kernel cannot hand a call to the referee."""
    syscall, _ = _libc_calls()
    action = ctypes.c_uint32(_RET_USER_NOTIF)
    if syscall(ctypes.c_long(syscall_number("seccomp")), ctypes.c_ulong(_GET_ACTION_AVAIL),
               ctypes.c_ulong(0), ctypes.byref(action)) != 0:
        raise SeccompUnavailable(
            "the kernel cannot hand sysinfo to the referee (seccomp user notification,"
            " Linux 5.0 or later): bots cannot run under bwrap here")


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class SysinfoNotifier:
    """One bot's start: the filter to install between fork and exec, and the socket
    pair that brings its listener to the referee. Made before the spawn (blocking the
    first time: libseccomp builds the filter); :meth:`close` it after."""

    def __init__(self) -> None:
        require_notification()
        program = notify_program("sysinfo")
        self._buffer = ctypes.create_string_buffer(program, len(program))
        self._fprog = _Fprog(len(program) // 8, ctypes.addressof(self._buffer))
        self._seccomp = syscall_number("seccomp")
        self._syscall, self._prctl = _libc_calls()
        self._ours, self._theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)

    def install_in_child(self) -> None:
        """In the bot's process, between fork and exec: install the filter and send
        its listener to the referee. OSError when the kernel refuses."""
        zero = ctypes.c_ulong(0)
        if self._prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), zero, zero, zero):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        listener = self._syscall(ctypes.c_long(self._seccomp),
                                 ctypes.c_ulong(_SET_MODE_FILTER),
                                 ctypes.c_ulong(_FLAG_NEW_LISTENER | _FLAG_SPEC_ALLOW),
                                 ctypes.byref(self._fprog))
        if listener < 0:
            raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)")
        try:
            socket.send_fds(self._theirs, [b"L"], [listener])
        finally:
            os.close(listener)  # close-on-exec anyway: never the bot's

    def take_listener(self) -> int | None:
        """After the spawn: the listener its process sent (a new descriptor, which the
        caller owns). None when none came (the process's ``sysinfo`` then fails with
        ``ENOSYS``); a process that started always sent it (else its
        :meth:`install_in_child` failed, and so did its start)."""
        self._ours.setblocking(False)
        try:
            # Close-on-exec as it arrives: a process another thread of the referee
            # starts meanwhile must not inherit it (it would outlive the referee).
            _, fds, _, _ = socket.recv_fds(self._ours, 1, 1, socket.MSG_CMSG_CLOEXEC)
        except OSError:
            return None
        for extra in fds[1:]:
            os.close(extra)
        return fds[0] if fds else None

    def close(self) -> None:
        self._ours.close()
        self._theirs.close()


async def serve(listener: int, figures: Figures, exiting: trio.Event | None = None) -> None:
    """Answer the ``sysinfo`` calls of ``listener`` with ``figures`` until every
    process under the filter is gone or the task is cancelled; then close it. Never
    raises. Each answer is a few system calls, made at once (the caller waits), the
    write into the caller's memory in a worker thread. Once ``exiting`` is set (the
    referee waits for the bot to exit), calls are answered without the rate limit:
    a runtime whose exit waits for its threads (a JVM's halt) must not wait for the
    referee's rationing, which would make its exit late."""
    poller = select.poll()
    poller.register(listener, select.POLLIN)
    tokens, last = float(BURST), trio.current_time()
    exiting = trio.Event() if exiting is None else exiting
    try:
        while True:
            await trio.lowlevel.wait_readable(listener)
            mask = _events(poller)
            if not mask & select.POLLIN:
                if mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    return  # no process is left under the filter
                continue
            tokens, last = _refill(tokens, last)
            if tokens < 1:  # a bot that calls it in a loop: its turn comes later,
                with trio.move_on_after(_BATCH / RATE):  # a few answers at a time
                    await exiting.wait()
                tokens, last = _refill(tokens, last)
            while (tokens >= 1 or exiting.is_set()) and _events(poller) & select.POLLIN:
                tokens -= 1
                call = _receive(listener)
                if call is not None:  # written from a thread: the caller's pages may
                    # have to come back from swap first. The thread gets a descriptor of
                    # its own: abandoned on cancel, it never uses a number closed here.
                    await trio.to_thread.run_sync(
                        _answer, os.dup(listener), call, figures, abandon_on_cancel=True)
    finally:
        trio.lowlevel.notify_closing(listener)
        os.close(listener)


#: Answers a bot that used up its burst gets at each turn.
_BATCH: Final = 10


def _events(poller: select.poll) -> int:
    events = poller.poll(0)
    return events[0][1] if events else 0


def _refill(tokens: float, last: float) -> tuple[float, float]:
    now = trio.current_time()
    return min(float(BURST), tokens + (now - last) * RATE), now


@attrs.frozen
class _Call:
    notification: int
    pid: int
    arch: int
    pointer: int


def _receive(listener: int) -> _Call | None:
    """One pending notification (it does not wait: one is pending, the poll said so);
    None when its caller was killed after the poll."""
    buffer = bytearray(_NOTIF.size)
    try:
        fcntl.ioctl(listener, _IOCTL_RECV, buffer, True)
    except OSError:  # ENOENT
        return None
    notification, pid, _flags, _nr, arch, _ip, pointer, *_ = _NOTIF.unpack(buffer)
    if not arch & _AUDIT_ARCH_64BIT:  # the kernel's 32-bit call reads only the register's
        pointer &= _U32  # lower half (int 0x80 from a 64-bit process may set the upper)
    return _Call(notification, pid, arch, pointer)


def _answer(listener: int, call: _Call, figures: Figures) -> None:
    """Write the figures into the caller and let it go on; then close ``listener`` (a
    copy of the referee's). Every notification is answered: one whose caller is gone
    just fails (``ENOENT``), while one left unanswered would hold its caller for as
    long as the bot lives."""
    notification = call.notification
    try:
        error = _write(listener, notification, call.pid,
                       figures.packed(call.arch, _uptime()), call.pointer)
        with contextlib.suppress(OSError):  # ENOENT: the caller is gone
            fcntl.ioctl(listener, _IOCTL_SEND,
                        bytearray(_RESP.pack(notification, 0, -error if error else 0, 0)))
    finally:
        os.close(listener)


def _write(listener: int, notification: int, pid: int, data: bytes, pointer: int) -> int:
    """Write ``data`` at ``pointer`` in process ``pid``: 0 when done, else the errno
    to answer with (nothing is written once the notification is no longer alive)."""
    if pid == 0:  # a process the referee's pid namespace does not see
        return errno.ENOSYS
    try:
        memory = os.open(f"/proc/{pid}/mem", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return errno.ENOSYS
    try:  # after the open: the descriptor holds the memory of the process it opened
        if not _alive(listener, notification):  # pid reused after the caller died
            return errno.ENOSYS
        try:
            written = os.pwrite(memory, data, pointer)
        except (OSError, OverflowError):
            return errno.EFAULT
        return 0 if written == len(data) else errno.EFAULT
    finally:
        os.close(memory)


def _alive(listener: int, notification: int) -> bool:
    """Whether the notification still waits for its answer (its caller is alive)."""
    for number in (_IOCTL_ID_VALID, _IOCTL_ID_VALID_OLD):
        try:
            fcntl.ioctl(listener, number, struct.pack("<Q", notification))
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return False
            continue  # a kernel that knows the number only by its other name
        return True
    return False


def _uptime() -> int:
    return int(time.clock_gettime(time.CLOCK_BOOTTIME))
