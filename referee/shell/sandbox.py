"""Running an untrusted bot under bubblewrap (``bwrap``, Debian's ``bubblewrap``).

A sandboxed bot gets new user, pid, ipc, uts, cgroup and network namespaces (no network
at all, not even the host's loopback), all capabilities dropped, a session of its own,
and dies with the referee (its guard and cleanup kill its pid 1, which ends the whole pid
namespace, ``setsid`` children included). It sees, read-only, the system directories,
the referee's own Python (for bot commands that start with ``python``), the SDK, its
working directory, the directory of each existing file its command names and any
``binds``; a private ``/tmp`` of ``tmp_mb`` MiB that is new for every process; and
nothing else: not the results database, the replays and logs, the tokens file, the
referee's working directory, the other bots' directories or other processes.

Resource limits (memory, processes, CPU share) are the business of
:mod:`referee.shell.limits`, which works with or without the sandbox.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import taki_protocol

from referee.core.errors import UserError
from referee.core.specs import Sandbox

__all__ = ["SANDBOX_PACKAGE", "SandboxError", "bwrap_path", "sandboxed_argv"]

#: The Debian package that provides ``bwrap``.
SANDBOX_PACKAGE = "bubblewrap"

#: System directories a program needs to run, bound read-only when they exist.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
#: The parts of /etc that programs need (the dynamic linker's cache, names of users,
#: time zone, certificates); the rest of /etc stays out of sight.
ETC_ENTRIES = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
    "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/ssl",
    "/etc/ca-certificates", "/etc/mime.types",
)


class SandboxError(UserError):
    """The sandbox cannot be used (``bwrap`` is missing): a setup error, exit 2."""


def bwrap_path() -> str:
    """The ``bwrap`` executable; SandboxError naming the package when it is missing."""
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxError(
            f"--sandbox needs bwrap, which is not installed: install the Debian package"
            f" {SANDBOX_PACKAGE} (apt-get install {SANDBOX_PACKAGE})"
        )
    return found


def _python_dirs() -> list[str]:
    """The referee's interpreter and its standard library, and the SDK's package."""
    dirs = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    dirs.add(os.path.dirname(os.path.realpath(sys.executable)))
    dirs.add(str(Path(taki_protocol.__file__).resolve().parent))
    return sorted(dirs)


def _named_files(argv: Iterable[str], cwd: str) -> dict[str, str]:
    """Each word of the command that names an existing file, with its absolute path."""
    named = {}
    for word in argv:
        path = os.path.join(cwd, word)  # an absolute word stays as it is
        if os.path.isfile(path):
            # Not resolved: a venv's python finds its venv through the path it was
            # started by. Its target's directory is readable too (below).
            named[word] = os.path.abspath(path)
    return named


def sandboxed_argv(
    argv: Iterable[str], cwd: str | None, sandbox: Sandbox, bwrap: str
) -> list[str]:
    """The command line that runs ``argv`` (started in ``cwd``, the referee's own working
    directory when None) inside the sandbox. Words naming an existing file are made
    absolute, since the sandbox starts the bot in its ``cwd`` only when one was given
    (the referee's working directory stays out of sight), else in its private /tmp."""
    argv = list(argv)
    here = os.path.realpath(cwd if cwd is not None else os.getcwd())
    named = _named_files(argv, here)
    readable = [*_python_dirs(),
                *(os.path.dirname(p) for p in named.values()),
                *(os.path.dirname(os.path.realpath(p)) for p in named.values()),
                *(os.path.realpath(b) for b in sandbox.binds)]
    if cwd is not None:
        readable.append(here)
    # The private /tmp first: a path under /tmp bound after it stays visible on top of it.
    out = [
        bwrap, "--unshare-all", "--new-session", "--cap-drop", "ALL",
        "--uid", "65534", "--gid", "65534", "--hostname", "sandbox",
        "--proc", "/proc", "--dev", "/dev", "--size", str(sandbox.tmp_mb << 20),
        "--tmpfs", "/tmp",
    ]
    for path in (*SYSTEM_DIRS, *ETC_ENTRIES):
        if os.path.lexists(path):
            out += ["--ro-bind", path, path]
    for path in dict.fromkeys(readable):
        if os.path.exists(path):
            out += ["--ro-bind", path, path]
    out += ["--chdir", here if cwd is not None else "/tmp", "--"]
    return out + [named.get(word, word) for word in argv]
