"""Writing a file whole or not at all: the one atomic write of the referee.

Replays, rendered pages, reports and the tokens file are written under a temporary name
in the target's directory, flushed to disk and renamed into place, so a reader never
sees half a file and a crash or a full disk never leaves one. The temporary name is
unique to the writing process and call (two referees writing into one directory never
collide), and it is removed whatever fails. A failure raises :class:`FileWriteError`,
whose one-line message names the file and the cause ("No space left on device").

Bot logs and replays are private to the referee's user (:func:`open_private`,
``write_atomically(private=True)``): files 0600 in directories created 0700, since they
tell how a game went and replays name its seed.

Plain, blocking file I/O: callers on the Trio loop run it in a thread.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Final

from referee.core.errors import UserError

__all__ = ["PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "FileWriteError", "make_private_dirs",
           "open_private", "write_atomically"]

#: Directories the referee creates for logs and replays, and the files in them.
PRIVATE_DIR_MODE: Final = 0o700
PRIVATE_FILE_MODE: Final = 0o600


class FileWriteError(UserError, OSError):
    """A file could not be written; nothing of it was left behind."""


def make_private_dirs(path: Path) -> None:
    """Create the directory ``path`` and its missing parents, each 0700 whatever the
    umask; directories that exist keep their mode (they are the user's)."""
    missing = []
    here = Path(path)
    while not here.is_dir():
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by another process (or a file: open will say)
        os.chmod(directory, PRIVATE_DIR_MODE)  # the umask may have taken bits away


def open_private(path: Path) -> BinaryIO:
    """``path`` opened for writing from its start, mode 0600 (an existing file is
    truncated and gets that mode), its missing directories created 0700."""
    path = Path(path)
    make_private_dirs(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
                 PRIVATE_FILE_MODE)
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def write_atomically(path: Path, data: str | bytes, *, what: str = "file",
                     mode: int | None = None, make_parents: bool = False,
                     private: bool = False, sync: bool = True) -> None:
    """Write ``data`` to ``path`` in one piece, creating its directory first with
    ``make_parents``; ``mode`` sets the permissions before any byte is written (e.g.
    0o600 for secrets). ``private``: mode 0600, and directories made 0700. ``what``
    names the file in the error ("replay", "tokens file"). ``sync=False`` leaves the
    data to the kernel's write-back (no fsync): still whole or absent to a reader, but
    a crash of the machine may lose it (pages made again by the next run)."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if private:
        mode = PRIVATE_FILE_MODE
    temp: str | None = None
    try:
        if make_parents and private:
            make_private_dirs(path.parent)
        elif make_parents:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as file:
            if mode is not None:
                os.fchmod(file.fileno(), mode)
            file.write(payload)
            file.flush()
            if sync:
                os.fsync(file.fileno())
        os.replace(temp, path)
    except OSError as exc:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        error = FileWriteError(f"cannot write the {what} {path}: {exc.strerror or exc}")
        error.errno = exc.errno
        raise error from None
