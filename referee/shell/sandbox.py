"""How a local bot is run: sandboxed, contained, or as it is.

Every local bot runs under bubblewrap (``bwrap``, Debian's ``bubblewrap``) with the
system call filter of :mod:`referee.shell.seccomp`, in one of two ways:

* **Sandboxed** (``--sandbox``, ``sandbox = true``): new user, pid, ipc, uts, cgroup and
  network namespaces (no network at all, not even the host's loopback), all capabilities
  dropped, uid and gid 65534, no new user namespaces inside (``--disable-userns`` where
  bwrap has it, and the filter). Never host root: run by root, the bot is a host user
  of its own (:mod:`referee.shell.sandbox_user`). It sees, read-only, the system
  directories and runtimes (:mod:`referee.shell.bot_paths`), the referee's own Python
  (for bot commands that start with ``python``), the SDK, its working directory, the
  directory of each existing file its command names (within its working directory when
  it has one: a word outside is refused) and any ``binds``, ``/proc`` with the host's
  counters frozen (:mod:`referee.shell.proc_masks`); a private ``/tmp`` of ``tmp_mb``
  MiB and 256 inodes a MiB (:func:`~referee.shell.sandbox_user.tmpfs_mounter`) that is
  new for every process, the
  only place it can write (the root and ``/dev`` are remounted read-only); and nothing
  else. Its environment is made from nothing (``--clearenv``): ``PATH`` (the
  referee's entries that the bot can see), ``LANG``, ``HOME`` (its ``/tmp``), the SDK's
  ``PYTHONPATH``, and the ``env`` its command names.
* **Contained** (every other local bot, where bwrap and pid namespaces work): a pid
  namespace, SysV IPC, ``/proc`` and minimal ``/dev`` of its own, no capabilities, and
  the same filter; the host's file system, network, user and environment as the
  referee has them.

bwrap's options go through a descriptor (``--args FD``), not its command line: the
sandbox's pid 1 is a fork of the outer bwrap, and its ``/proc/1/cmdline`` would show
every host path bound in. The outer bwrap gets the bot's environment, not the
referee's, for the same reason (``/proc/1/environ``).

**Lifetime.** bwrap is started as the leader of a new session and process group, and its
pid 1 stays in that group (no ``--new-session``: the group has no terminal to protect).
Killing the group, as the referee's cleanup and the bot's guard do
(:mod:`referee.shell.guard`), kills pid 1, and the kernel then kills every process of
the pid namespace: children in sessions of their own (``setsid``) included. The bot
cannot take pid 1 out of the group (the filter denies ``ptrace``) and cannot see the
guard or the referee (another pid namespace). Nothing relies on a parent-death signal.

Where bwrap, libseccomp or the kernel's namespaces are missing, bots run as they are
(:func:`containment` says why; the command line says so on its first line).
``TAKI_REFEREE_CONTAIN=off`` asks for that too (for measurements).

Resource limits (memory, processes, CPU share) are the business of
:mod:`referee.shell.limits`, which works in every one of these ways.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import stat
import subprocess
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import attrs

from referee.core import BotCommand, Sandbox, UserError
from referee.shell.bot_paths import (
    OutsideTheBot,
    inside,
    named_files,
    python_dirs,
    sdk_dir,
    toolchains,
)
from referee.shell.limits import CGROUP_ROOT
from referee.shell.proc_masks import mask_options
from referee.shell.process import BotProcess
from referee.shell.sandbox_user import (
    RUN,
    SANDBOX_ID,
    TMPFS_BASE,
    make_tmpfs_base,
    next_host_id,
    tmpfs_mounter,
    user_namespace,
)
from referee.shell.seccomp import LIBRARY_PACKAGE, SeccompUnavailable, filter_fd
from referee.shell.sysinfo_notify import SysinfoNotifier, require_notification

__all__ = [
    "CONTAIN_VARIABLE",
    "SANDBOX_PACKAGE",
    "SANDBOX_PIDS",
    "Containment",
    "Launch",
    "SandboxError",
    "WrappedBotProcess",
    "bwrap_path",
    "containment",
    "launch",
    "require_sandbox",
    "sandbox_env",
]

#: The Debian package that provides ``bwrap``.
SANDBOX_PACKAGE: Final = "bubblewrap"
#: ``TAKI_REFEREE_CONTAIN=off``: unsandboxed bots run as they are.
CONTAIN_VARIABLE: Final = "TAKI_REFEREE_CONTAIN"

#: The process limit of a sandboxed bot that has none (threads count: a JVM or a .NET
#: runtime starts a few dozen).
SANDBOX_PIDS: Final = 256
#: The language a sandboxed bot gets when the referee has none.
DEFAULT_LANG: Final = "C.UTF-8"
#: The sandboxed bot's home: its private /tmp.
SANDBOX_HOME: Final = "/tmp"


class SandboxError(UserError):
    """The sandbox cannot be used (``bwrap`` or libseccomp is missing): a setup error,
    exit 2."""


def bwrap_path() -> str:
    """The ``bwrap`` executable; SandboxError naming the package when it is missing."""
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxError(
            f"--sandbox needs bwrap, which is not installed: install the Debian package"
            f" {SANDBOX_PACKAGE} (apt-get install {SANDBOX_PACKAGE})"
        )
    return found


def require_sandbox() -> str:
    """``bwrap``'s path when the sandbox can run (bwrap and libseccomp present); else
    SandboxError naming the missing package. Blocking the first time (it asks bwrap
    which options it has)."""
    bwrap = bwrap_path()
    try:
        os.close(filter_fd())
        require_notification()
    except SeccompUnavailable as exc:
        raise SandboxError(f"--sandbox needs a system call filter: {exc}") from None
    _disable_userns(bwrap)
    return bwrap


@attrs.frozen
class Containment:
    """Whether unsandboxed bots run in a pid namespace of their own, and if not why."""

    contained: bool
    #: Why not (empty when contained).
    why: str = ""
    #: The bwrap that contains them (empty when not contained).
    bwrap: str = ""

    def describe(self) -> str:
        """The line that says so: ``processes: ...``."""
        if self.contained:
            return "processes: contained (a pid namespace per bot)"
        return (f"processes: not contained ({self.why}): a bot can outlive the referee"
                f" and read what the referee's user can")


#: How long the probe may take (the first run of bwrap on a cold machine).
_PROBE_TIMEOUT_S: Final = 10.0


@functools.cache
def containment() -> Containment:
    """Whether bots can be contained here: bwrap, libseccomp and a pid namespace (a user
    namespace too, for a user other than root), tried once per referee process by
    running ``true`` the way a bot would run. Blocking (a few milliseconds): call it
    before the first bot, or in a thread."""
    if os.environ.get(CONTAIN_VARIABLE, "").lower() in ("off", "0", "no"):
        return Containment(False, f"{CONTAIN_VARIABLE}=off")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Containment(False, f"no bwrap: install the Debian package {SANDBOX_PACKAGE}")
    try:
        fd = filter_fd()
    except SeccompUnavailable:
        return Containment(False, f"no libseccomp: install the Debian package"
                                  f" {LIBRARY_PACKAGE}")
    os.close(fd)
    try:
        require_notification()
    except SeccompUnavailable as exc:
        return Containment(False, str(exc))
    true = shutil.which("true") or "/bin/true"
    here = os.getcwd()
    why = _runs(_through_args_fd(bwrap, lambda fd: _contained_options(fd, here), [true],
                                 None, sandboxed=False))
    if why:
        return Containment(False, why)
    return Containment(True, bwrap=bwrap)


def _runs(start: Launch) -> str:
    """Empty when ``start`` runs and exits with status 0, else why not (one line)."""
    try:
        done = subprocess.run(
            start.argv, pass_fds=start.fds, env=start.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=_PROBE_TIMEOUT_S,
            check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap does not run: {exc}"
    finally:
        start.close()
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return said[-1] if said else f"bwrap exited with status {done.returncode}"
    return ""


@attrs.frozen
class Launch:
    """What to start for a bot: the command line, working directory and environment
    (None: the referee's), and descriptors to pass on (``pass_fds``), which belong to
    this value: :meth:`close` them once the process has started (or failed to)."""

    argv: tuple[str, ...]
    cwd: str | None
    env: Mapping[str, str] | None
    fds: tuple[int, ...] = ()
    #: What the process must do between fork and exec, last (as root: mount its
    #: sandbox's /tmp and /dev/shm), if anything.
    in_child: Callable[[], None] | None = None
    #: The filter that hands ``sysinfo`` to the referee, for a bot (not a probe) run
    #: under bwrap; :meth:`close` closes its sockets.
    sysinfo: SysinfoNotifier | None = None

    @property
    def wrapped(self) -> bool:
        """Whether the process is bwrap's (a :class:`WrappedBotProcess`)."""
        return bool(self.fds)

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.sysinfo is not None:
            self.sysinfo.close()


class WrappedBotProcess(BotProcess):
    """A bot run by bwrap, whose exit status is 128 + N when the bot was killed by
    signal N (as a shell's is): its exit status says that it was killed, as a bare
    bot's does (negative). bwrap's own death by a signal (the referee's kill) is told
    as it is. (The status is translated once, as it is seen: ``returncode``, which is
    read before every request, stays an attribute's read.)"""

    def exit_status(self, code: int) -> int:
        return 128 - code if 128 < code < 128 + signal.NSIG else code


def launch(command: BotCommand, env: Mapping[str, str] | None) -> Launch:
    """How to start ``command`` (whose environment is ``env``, None: the referee's):
    sandboxed when it asks for the sandbox, else contained where :func:`containment`
    allows, else as it is. Raises SandboxError when the sandbox cannot run. Blocking
    (the first call probes the host, a few milliseconds): call it in a thread."""
    if command.sandbox is not None:
        start = _sandboxed(command, require_sandbox())
    else:
        contained = containment()
        if not contained.contained:  # as it is: no filter at all
            return Launch(command.argv, command.cwd, env)
        here = os.path.realpath(command.cwd if command.cwd is not None else os.getcwd())
        start = _through_args_fd(contained.bwrap, lambda fd: _contained_options(fd, here),
                                 command.argv, env, sandboxed=False)
    try:  # its sysinfo answered by the referee (referee.shell.sysinfo_notify)
        return attrs.evolve(start, sysinfo=SysinfoNotifier())
    except BaseException:
        start.close()
        raise


#: Where the cgroup file system is mounted.
_CGROUP_FS: Final = str(CGROUP_ROOT)


def _contained_options(seccomp_fd: int, cwd: str) -> list[str]:
    """bwrap's options for a contained bot: its own pid and SysV IPC namespaces, /proc
    and minimal /dev (and so /dev/shm), the host's file system and everything else as
    the referee has it, but for the cgroup file system, read-only: the bot can neither
    leave its cgroups (which count its CPU time and bound its memory and processes) nor
    change their limits. No capabilities."""
    return ["--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL", "--dev-bind", "/", "/",
            "--ro-bind-try", _CGROUP_FS, _CGROUP_FS, "--proc", "/proc", "--dev", "/dev",
            "--seccomp", str(seccomp_fd), "--chdir", cwd]


def _through_args_fd(bwrap: str, options: Callable[[int], list[str]], argv: Sequence[str],
                     env: Mapping[str, str] | None, more_fds: tuple[int, ...] = (),
                     in_child: Callable[[], None] | None = None, *, sandboxed: bool = True
                     ) -> Launch:
    """The launch of ``bwrap --args FD -- ARGV...``, where FD holds
    ``options(seccomp_fd)``, NUL-separated (bwrap reads only options there), with the
    masks of /proc (:mod:`referee.shell.proc_masks`) right after ``--proc``.
    ``more_fds`` (which the launch takes over) are passed on too. ``sandboxed``: the
    sandbox's filter, else a contained bot's (:mod:`referee.shell.seccomp`)."""
    try:
        seccomp = filter_fd(sandboxed=sandboxed)
    except BaseException:
        Launch((), None, None, more_fds).close()
        raise
    fds = (seccomp, *more_fds)
    try:
        masks, mask_fds = mask_options()
        fds += mask_fds
        words = options(seccomp)
        at = words.index("--proc") + 2  # right after /proc is mounted
        words[at:at] = masks
        args = os.memfd_create("taki-referee-bwrap-args", os.MFD_CLOEXEC)
    except BaseException:
        Launch((), None, None, fds).close()
        raise
    fds += (args,)
    try:
        os.write(args, b"".join(os.fsencode(w) + b"\0" for w in words))
        os.lseek(args, 0, os.SEEK_SET)
    except BaseException:
        Launch((), None, None, fds).close()
        raise
    return Launch((bwrap, "--args", str(args), "--", *argv), None, env, fds, in_child)


def sandbox_env(command: BotCommand, bound: Sequence[str]) -> dict[str, str]:
    """The whole environment of a sandboxed bot: ``PATH`` (the entries of the referee's
    that lie in ``bound``, the paths the bot sees), ``LANG``, ``HOME``, the SDK's
    ``PYTHONPATH``, then the command's own ``env``."""
    path = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep)
            if p and inside(os.path.realpath(p), bound)]
    env = {
        "PATH": os.pathsep.join(path) or "/usr/bin:/bin",
        "LANG": os.environ.get("LANG") or DEFAULT_LANG,
        "HOME": SANDBOX_HOME,
        "PYTHONPATH": os.path.dirname(sdk_dir()),
    }
    env.update(command.env or {})
    return env


def _sandboxed(command: BotCommand, bwrap: str) -> Launch:
    """The launch of ``command`` inside the sandbox. Words naming an existing file are
    made absolute, since the sandbox starts the bot in its ``cwd`` only when one was
    given (the referee's working directory stays out of sight), else in its private
    /tmp. SandboxError for a word outside the bot (:mod:`referee.shell.bot_paths`) or
    a path the bot could not read."""
    sandbox = command.sandbox
    assert sandbox is not None
    argv, cwd = command.argv, command.cwd
    here = os.path.realpath(cwd if cwd is not None else os.getcwd())
    try:
        named = named_files(argv, here, own_folder=cwd is not None)
    except OutsideTheBot as exc:
        raise SandboxError(str(exc)) from None
    readable = [*python_dirs(),
                *(os.path.dirname(p) for p in named.values()),
                *(os.path.dirname(os.path.realpath(p)) for p in named.values()),
                *(os.path.realpath(b) for b in sandbox.binds)]
    if cwd is not None:
        readable.append(here)
    system = [p for p in toolchains() if os.path.lexists(p) and p not in readable]
    extra = [p for p in dict.fromkeys(readable) if os.path.exists(p)]
    as_root = os.geteuid() == 0
    if as_root:
        _readable_by_others(extra)
    env = sandbox_env(command, [os.path.realpath(p) for p in (*system, *extra)])
    userns: tuple[int, ...] = ()
    if as_root:
        try:
            userns = (user_namespace(next_host_id()),)
        except OSError as exc:
            raise SandboxError(f"the sandbox cannot make a user namespace for the bot:"
                               f" {exc.strerror or exc}") from None
    users = (["--userns", str(userns[0]), "--unshare-pid", "--unshare-ipc", "--unshare-net",
              "--unshare-uts", "--unshare-cgroup-try"] if userns else
             ["--unshare-all", "--unshare-user", *_disable_userns(bwrap)])
    if as_root:
        make_tmpfs_base()
    # Run by another user, the bot's process mounts its tmpfs over /run (in a mount
    # namespace of its own): unless bwrap must bind something from there.
    mounted = as_root or (os.path.isdir(RUN) and not any(
        inside(os.path.realpath(p), [RUN]) for p in (*system, *extra)))
    return _through_args_fd(
        bwrap, lambda fd: [*users, *_sandbox_options(fd, sandbox, system, extra, here, cwd,
                                                      env, mounted=mounted)],
        [named.get(word, word) for word in argv], env, userns,
        tmpfs_mounter(sandbox.tmp_mb, own_user=not as_root) if mounted else None)


def _readable_by_others(paths: Sequence[str]) -> None:
    """SandboxError naming the first of ``paths`` that a bot run as a user of its own
    (the referee is root) cannot read: the folders above do not matter, bwrap binds
    them as root."""
    for path in paths:
        mode = os.stat(path).st_mode
        need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & need != need:
            raise SandboxError(
                f"the sandbox runs bots as a user of their own, who cannot read {path}"
                f" (mode {stat.S_IMODE(mode):04o}): make it readable by others"
                f" (chmod o+rX)")


def _sandbox_options(seccomp_fd: int, sandbox: Sandbox, system: Sequence[str],
                     extra: Sequence[str], here: str, cwd: str | None,
                     env: Mapping[str, str], *, mounted: bool) -> list[str]:
    """bwrap's options after the namespaces'. ``mounted``: /tmp and /dev/shm are the
    tmpfs mounted under :data:`TMPFS_BASE` before bwrap starts (bounded in inodes too),
    else bwrap's own (bounded in size)."""
    size = str(sandbox.tmp_mb << 20)
    tmp, shm = (["--bind", f"{TMPFS_BASE}/{name}", where] if mounted else
                ["--size", size, "--tmpfs", where]
                for name, where in (("tmp", "/tmp"), ("shm", "/dev/shm")))
    # The private /tmp first: a path under /tmp bound after it stays visible on top of it.
    out = [
        "--cap-drop", "ALL", "--uid", str(SANDBOX_ID), "--gid", str(SANDBOX_ID),
        "--hostname", "sandbox", "--proc", "/proc", "--dev", "/dev", *tmp,
        "--seccomp", str(seccomp_fd), "--clearenv",
    ]
    for key, value in env.items():
        out += ["--setenv", key, value]
    for path in (*system, *extra):
        out += ["--ro-bind", path, path]
    # Last, once every mount point is made: the root (bwrap's in-memory folder that holds
    # the mount points) and /dev (its device nodes still work) become read-only; /tmp
    # and a /dev/shm of the same bound (POSIX shared memory and semaphores, e.g. Python's
    # multiprocessing) stay the places to write.
    out += ["--remount-ro", "/", "--remount-ro", "/dev", *shm]
    return [*out, "--chdir", here if cwd is not None else SANDBOX_HOME]


@functools.cache
def _disable_userns(bwrap: str) -> tuple[str, ...]:
    """``--disable-userns`` where this bwrap has it (0.8.0 on); the filter denies new
    user namespaces either way."""
    try:
        helped = subprocess.run([bwrap, "--help"], capture_output=True,
                                timeout=_PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return ()
    return ("--disable-userns",) if b"--disable-userns" in helped.stdout else ()
