"""Writing a file whole or not at all: the one atomic write of the referee.

Replays, rendered pages, reports and the tokens file are written under a temporary name
in the target's directory, flushed to disk and renamed into place, so a reader never
sees half a file and a crash or a full disk never leaves one. The temporary name is
unique to the writing process and call (two referees writing into one directory never
collide), and it is removed whatever fails. A failure raises :class:`FileWriteError`,
whose one-line message names the file and the cause ("No space left on device").

Plain, blocking file I/O: callers on the Trio loop run it in a thread.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from referee.core.errors import UserError

__all__ = ["FileWriteError", "write_atomically"]


class FileWriteError(UserError, OSError):
    """A file could not be written; nothing of it was left behind."""


def write_atomically(path: Path, data: str | bytes, *, what: str = "file",
                     mode: int | None = None, make_parents: bool = False) -> None:
    """Write ``data`` to ``path`` in one piece, creating its directory first with
    ``make_parents``; ``mode`` sets the permissions before any byte is written (e.g.
    0o600 for secrets). ``what`` names the file in the error ("replay", "tokens file")."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temp: str | None = None
    try:
        if make_parents:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as file:
            if mode is not None:
                os.fchmod(file.fileno(), mode)
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except OSError as exc:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        error = FileWriteError(f"cannot write the {what} {path}: {exc.strerror or exc}")
        error.errno = exc.errno
        raise error from None
