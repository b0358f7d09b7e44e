"""A commit of this repository checked out beside it, for the benchmarks that run the
referee of an anchor commit against this tree in one run."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def checked_out(commit: str, where: Path) -> Iterator[Path]:
    """``commit`` in a detached worktree at ``where``, removed afterwards."""
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--quiet", "--detach",
                    str(where), commit], check=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(where)],
                       check=False)
