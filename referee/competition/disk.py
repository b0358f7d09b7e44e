"""The free space of the competition's disk: below a reserve, uploads are refused (507)
and the ladder pauses until space returns; nothing stops.

The space is read with ``statvfs`` (a few microseconds: it is read on the Trio thread),
through a probe that tests replace.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import attrs

from referee.competition.errors import Refusal, Refused

__all__ = ["DiskGauge", "is_disk_full"]


def _free(path: Path) -> int:
    return shutil.disk_usage(path).free


@attrs.define
class DiskGauge:
    """The free bytes of the disk of ``path``, against ``reserve`` bytes."""

    path: Path
    reserve: int
    probe: Callable[[Path], int] = _free

    def free(self) -> int:
        try:
            return self.probe(self.path)
        except OSError:
            return 0

    def has_room(self) -> bool:
        return self.free() >= self.reserve

    def require_room(self) -> None:
        """Refused (NO_SPACE) when the disk is below its reserve."""
        if not self.has_room():
            raise Refused(Refusal.NO_SPACE, "the server's disk is full: uploads are"
                          " refused and the ladder is paused until space returns;"
                          " try again later")


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) says a disk or a database is full."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(seen, sqlite3.Error) and "full" in str(seen).lower():
            return True
        if "disk is full" in str(seen) or os.strerror(errno.ENOSPC) in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
