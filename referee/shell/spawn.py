"""Starting a bot: resolving its program, its limits (prlimit, cgroups), its sandbox and
its guard, then handing it to a :class:`~referee.shell.process.BotProcess` that
guarantees it is killed and reaped on every way out.

Between ``fork`` and ``exec`` the child tells its guard its group, joins its cgroups,
installs the ``sysinfo`` filter (a bot run under bwrap: :mod:`referee.shell.sysinfo_notify`)
and sets its ``setrlimit`` limits, in that order: everything the bot forks inherits them
(each process with its own budget for the rlimits, all of them together for a cgroup).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import BinaryIO

import attrs
import trio

from referee.core import (
    BotCommand,
    BotStartError,
    FileWriteError,
    ResourceLimits,
    open_private,
)
from referee.shell.guard import GroupGuard
from referee.shell.limits import CgroupHandle, LimitError, limit_backend
from referee.shell.process import DEFAULT_STDERR_CAP_BYTES, BotProcess
from referee.shell.sandbox import SANDBOX_PIDS, SandboxError, WrappedBotProcess
from referee.shell.sandbox import launch as bot_launch
from referee.shell.services import service_nursery
from referee.shell.sysinfo_notify import figures_for, serve

__all__ = ["open_bot_process", "rlimits"]

MIB = 1 << 20


def rlimits(limits: ResourceLimits) -> list[tuple[int, int, int]]:
    """The ``(resource, soft, hard)`` triples to pass to :func:`resource.setrlimit`."""
    wanted: list[tuple[int, int, int]] = []
    if limits.address_space_mb is not None:
        size = limits.address_space_mb * MIB
        wanted.append((resource.RLIMIT_AS, size, size))
    if limits.cpu_seconds is not None:
        wanted.append((resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1))
    if limits.file_size_mb is not None:
        size = limits.file_size_mb * MIB
        wanted.append((resource.RLIMIT_FSIZE, size, size))
    if limits.open_files is not None:
        wanted.append((resource.RLIMIT_NOFILE, limits.open_files, limits.open_files))
    clamped: list[tuple[int, int, int]] = []
    for which, soft, hard in wanted:
        ceiling = resource.getrlimit(which)[1]
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        clamped.append((which, soft, hard))
    return clamped


def _resolve_executable(command: BotCommand, env: Mapping[str, str] | None) -> str:
    """Find the executable the way the spawn will, or raise BotStartError."""
    exe = command.argv[0]
    cwd = command.cwd
    if cwd is not None and not os.path.isdir(cwd):
        raise BotStartError(command.display, f"working directory {cwd!r} does not exist")
    if os.sep in exe:
        path = os.path.join(cwd, exe) if cwd is not None else exe
        if not os.path.exists(path):
            raise BotStartError(command.display, f"executable {exe!r} not found")
        if not os.path.isfile(path) or not os.access(path, os.X_OK):
            raise BotStartError(command.display, f"{exe!r} is not an executable file")
        return path
    search = (env if env is not None else os.environ).get("PATH", os.defpath)
    found = shutil.which(exe, path=search)
    if found is None:
        raise BotStartError(command.display, f"executable {exe!r} not found")
    return found


def lower_priority(niceness: int) -> None:
    """Lower the calling process's CPU priority by ``niceness`` levels, and its
    session's autogroup's (the kernel shares the CPUs between sessions first, so a nice
    value alone would yield only to the bot's own processes). Best effort for the
    autogroup: the kernel may refuse a write, or have no autogroups."""
    os.nice(niceness)
    with contextlib.suppress(OSError):
        fd = os.open("/proc/self/autogroup", os.O_WRONLY)
        try:
            os.write(fd, b"%d" % niceness)
        finally:
            os.close(fd)


def _make_preexec(
    limits: list[tuple[int, int, int]], guard: GroupGuard | None,
    cgroup: CgroupHandle | None = None, niceness: int | None = None,
    *, no_groups: bool = False, last: Callable[[], None] | None = None,
    sysinfo: Callable[[], None] | None = None,
) -> Callable[[], None] | None:
    if not limits and guard is None and cgroup is None and niceness is None \
            and not no_groups and last is None and sysinfo is None:
        return None

    def before_exec() -> None:  # runs in the child, between fork and exec
        if guard is not None:  # first: the limits could make the write fail
            guard.announce_in_child()
        if cgroup is not None:  # before exec: all the bot starts is inside
            cgroup.join_in_child()
        if sysinfo is not None:  # before RLIMIT_NOFILE: it makes a descriptor
            sysinfo()
        for which, soft, hard in limits:
            resource.setrlimit(which, (soft, hard))
        if niceness is not None:  # after setsid: the new session's autogroup
            lower_priority(niceness)
        if no_groups:  # bwrap run by root: none of root's groups reach the bot
            os.setgroups([])
        if last is not None:  # the sandbox's own (its /tmp's mounts)
            last()

    return before_exec


def _with_default_pids(command: BotCommand) -> ResourceLimits:
    """The command's limits, with :data:`SANDBOX_PIDS` for a sandboxed bot that has no
    process limit, where one binds the bot alone: a cgroup, or (the referee is root)
    ``RLIMIT_NPROC`` of the bot's own host user. Under prlimit for another user, that
    limit would count every process of the user: none then."""
    limits = command.limits
    if command.sandbox is None or limits.pids is not None:
        return limits
    if limit_backend().name == "prlimit" and os.geteuid() != 0:
        return limits
    return attrs.evolve(limits, pids=SANDBOX_PIDS)


def _describe_spawn_error(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return f"{type(exc).__name__}: {exc}"


@contextlib.asynccontextmanager
async def open_bot_process(
    command: BotCommand,
    *,
    stderr_path: Path | None = None,
    stderr_cap_bytes: int = DEFAULT_STDERR_CAP_BYTES,
) -> AsyncIterator[BotProcess]:
    """Start ``command`` and yield a :class:`BotProcess`; kill it all on exit.

    ``stderr_path`` receives the first ``stderr_cap_bytes`` of the bot's
    stderr (a file 0600; its missing parent directories are created 0700); with
    None, stderr is still drained and its tail kept in memory.

    Raises :class:`BotStartError` if the command cannot be started. Exceptions
    from the body propagate unchanged (not wrapped in an exception group).
    """
    if stderr_cap_bytes < 0:
        raise ValueError(f"stderr_cap_bytes must be non-negative, got {stderr_cap_bytes}")
    env = command.child_env()
    try:  # sandboxed, or contained in a pid namespace (in a thread: it may probe bwrap)
        start = await trio.to_thread.run_sync(bot_launch, command, env)
    except (SandboxError, OSError) as exc:
        raise BotStartError(command.display, str(exc)) from None
    try:  # after the sandbox's check of the command's words: it tells nothing of the host
        _resolve_executable(command, env)
    except BaseException:
        start.close()
        raise
    wanted = _with_default_pids(command)
    hard = wanted.hard()
    # A contained or sandboxed bot gets a cgroup that counts its CPU time, limits or not.
    backend = limit_backend() if hard or start.wrapped else None
    limits = rlimits(wanted) + (backend.rlimits(hard) if backend else [])
    cgroup = None
    if backend is not None:
        try:
            backend.check(hard)
            cgroup = backend.prepare(hard, account=start.wrapped)
        except (LimitError, OSError) as exc:
            start.close()
            raise BotStartError(command.display, f"cannot set its limits: {exc}") from None

    log: BinaryIO | None = None
    if stderr_path is not None:
        try:
            log = open_private(stderr_path)  # 0600 in a directory made 0700
        except OSError as exc:  # e.g. a file where the log folder was
            start.close()
            if cgroup is not None:
                cgroup.remove()
            raise FileWriteError(f"cannot write the bot's log {stderr_path}:"
                                 f" {exc.strerror or exc}") from None
    guard: GroupGuard | None = None
    sysinfo = start.sysinfo
    try:
        # The guard first: the bot's process tells it its group before its exec.
        guard = await GroupGuard.start(command.display)
        process = await trio.lowlevel.open_process(
            start.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=start.cwd,
            env=start.env,
            pass_fds=start.fds,
            start_new_session=True,
            close_fds=True,
            preexec_fn=_make_preexec(limits, guard, cgroup, wanted.niceness,
                                     no_groups=start.wrapped and os.geteuid() == 0,
                                     last=start.in_child,
                                     sysinfo=None if sysinfo is None else sysinfo.install_in_child),
        )
        # Sent before the exec, which open_process waits for.
        listener = sysinfo.take_listener() if sysinfo is not None else None
    except BaseException as exc:
        if log is not None:
            log.close()
        if cgroup is not None:
            cgroup.remove()
        if guard is not None:  # the bot's process, if any, died before its exec
            await guard.close()
        if isinstance(exc, (OSError, subprocess.SubprocessError)):
            raise BotStartError(command.display, _describe_spawn_error(exc)) from exc
        raise
    finally:
        start.close()  # the bot's process has its copies (pass_fds, the listener)

    bot = (WrappedBotProcess if start.wrapped else BotProcess)(
        command, process, log, stderr_cap_bytes, guard=guard, cgroup=cgroup)
    try:
        async with service_nursery() as nursery:
            listener = _serve_sysinfo(nursery, listener, wanted, bot)
            bot.start_services(nursery)
            try:
                yield bot
            finally:
                with trio.CancelScope(shield=True):
                    await bot.aclose()
    finally:
        if listener is not None:  # the nursery failed to open: no sysinfo answers
            os.close(listener)
        with trio.CancelScope(shield=True):  # no-op unless the nursery failed to open
            await bot.aclose()


def _serve_sysinfo(nursery: trio.Nursery, listener: int | None, limits: ResourceLimits,
                   bot: BotProcess) -> int | None:
    """Answer the ``sysinfo`` calls of ``bot``, whose listener is ``listener`` (if it
    has one), from a task of ``nursery``, which owns the listener from now on and closes
    it whatever happens; what the caller still holds: nothing."""
    if listener is not None:
        nursery.start_soon(serve, listener, figures_for(limits), bot.exiting,
                           name=f"bot {bot.pid} sysinfo")
    return None
