"""What a sandboxed bot may read: the system, the runtimes, its own folder.

A bot's command is the participant's in a competition (``command`` in ``bot.toml``).
Its words must not open the host to it: a word that names a file (``bot.py``,
``./bot``, ``/usr/bin/java``) is bound into the sandbox only when it lies in the bot's
own folder (its ``cwd``) or among the runtimes (:func:`toolchains`); a bot with a
``cwd`` whose command names a path anywhere else (``../../organizer.token``,
``/etc/shadow``) is refused before anything starts, whether that path exists or not.
A bot without a ``cwd`` (a command line the organizer typed, ``match "python
bots/alice.py"``) still gets the folder of each file its command names.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import taki_protocol

__all__ = ["ETC_ENTRIES", "SYSTEM_DIRS", "OutsideTheBot", "etc_entries",
           "inside", "named_files", "python_dirs", "sdk_dir", "toolchains"]

#: System directories a program needs to run, bound read-only when they exist.
SYSTEM_DIRS: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
#: The parts of /etc that programs need (the dynamic linker's cache, names of users,
#: time zone, certificates, the JDK's and Mono's configuration); the rest of /etc stays
#: out of sight. Glob patterns.
ETC_ENTRIES: Final = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
    "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/ssl",
    "/etc/ca-certificates", "/etc/mime.types", "/etc/java-*-openjdk", "/etc/mono",
)


class OutsideTheBot(ValueError):
    """A word of a sandboxed bot's command names a path outside its folder and the
    runtimes."""


def etc_entries() -> list[str]:
    """The entries of /etc that exist here."""
    return [p for pattern in ETC_ENTRIES for p in sorted(glob.glob(pattern))]


def sdk_dir() -> str:
    """The SDK's package (``taki_protocol``)."""
    return str(Path(taki_protocol.__file__).resolve().parent)


def python_dirs() -> list[str]:
    """The referee's interpreter and its standard library, and the SDK's package."""
    dirs = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    dirs.add(os.path.dirname(os.path.realpath(sys.executable)))
    dirs.add(sdk_dir())
    return sorted(dirs)


def toolchains() -> list[str]:
    """Every runtime a bot may name and run: the system directories (the
    distribution's compilers and runtimes: Node.js, the JDK, Go, cargo and rustc, Mono,
    gcc), the parts of /etc they need and the referee's Python, those that exist. A
    toolchain installed in the referee's home (rustup's) is not among them: its
    settings live there too."""
    found = [p for p in SYSTEM_DIRS if os.path.lexists(p)]
    return [*found, *etc_entries(), *python_dirs()]


def inside(path: str, folders: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``folders`` or lies under one."""
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def named_files(argv: Sequence[str], cwd: str, *, own_folder: bool) -> dict[str, str]:
    """Each word of the command that names an existing file to bind, with its absolute
    path. With ``own_folder`` (the bot has a ``cwd``) only files in ``cwd`` or the
    runtimes are named, and a word that is a path (a ``/`` and no blank: not a shell
    script's text) resolving anywhere else raises OutsideTheBot, whether it exists or
    not (the answer tells nothing of the host)."""
    allowed = [cwd, *(os.path.realpath(p) for p in toolchains())]
    named = {}
    for word in argv:
        path = os.path.join(cwd, word)  # an absolute word stays as it is
        if own_folder and not inside(os.path.realpath(path), allowed):
            if "/" in word and not any(c.isspace() for c in word):
                raise OutsideTheBot(
                    f"the command's word {word!r} names a path outside the bot's folder:"
                    f" a sandboxed bot's command may name only its own files and the"
                    f" runtimes")
            continue
        if os.path.isfile(path):
            # Not resolved: a venv's python finds its venv through the path it was
            # started by. Its target's directory is readable too.
            named[word] = os.path.abspath(path)
    return named
