"""Unpacking in a process of its own: the decompression and the writing of an upload
(up to ``max_unpacked_mb``, a bomb included) take neither the server's interpreter lock
nor its CPU priority from the ladder's games. The process runs ``NICENESS`` levels
lower, within ``MEMORY_BYTES`` of address space, and answers in one JSON line on its
standard output.

``python -m referee.competition.unpack_process ARCHIVE TARGET MAX_BYTES MAX_FILES``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Final

from referee.competition.errors import Refusal, Refused
from referee.competition.unpack import UnpackLimits, unpack

__all__ = ["unpack_in_process"]

#: Below the server's CPU priority (as a build).
NICENESS: Final = 10
#: The unpacking process's address space at most.
MEMORY_BYTES: Final = 1 << 30
#: An unpacking that takes longer is stopped (the upload is refused).
TIMEOUT_S: Final = 300


def unpack_in_process(archive_path: Path, target: Path, limits: UnpackLimits) -> int:
    """As :func:`referee.competition.unpack.unpack`, in a process of its own. Blocking."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__, str(archive_path), str(target),
             str(limits.max_bytes), str(limits.max_files)],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise Refused(Refusal.BAD_UPLOAD, f"the archive takes longer than {TIMEOUT_S} s"
                      " to unpack") from None
    try:
        answer = json.loads(done.stdout.splitlines()[-1])
    except (IndexError, ValueError):
        raise Refused(Refusal.BAD_UPLOAD, "the archive could not be unpacked (the unpacking"
                      f" stopped: exit status {done.returncode})") from None
    if "refusal" in answer:
        raise Refused(Refusal(answer["refusal"]), answer["message"])
    if "errno" in answer:  # a problem of the server's disk
        raise OSError(answer["errno"], answer["message"])
    return int(answer["files"])


def _main(argv: list[str]) -> int:
    os.nice(NICENESS)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    archive, target, max_bytes, max_files = argv
    try:
        files = unpack(Path(archive), Path(target), UnpackLimits(int(max_bytes),
                                                                 int(max_files)))
    except Refused as exc:
        answer: dict[str, object] = {"refusal": exc.refusal.value, "message": exc.message}
    except MemoryError:
        answer = {"refusal": Refusal.TOO_LARGE.value,
                  "message": "the archive needs too much memory to unpack"}
    except OSError as exc:
        answer = {"errno": exc.errno, "message": exc.strerror or str(exc)}
    else:
        answer = {"files": files}
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
