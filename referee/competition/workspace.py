"""The competition's files: one folder per submission under ``uploads`` (``source``, the
upload from its ``bot.toml`` down, and, for a bot with a ``build``, ``bot``, what the
build left), uploads being received in ``incoming``, the ladder's replays and logs.

A submission's folder is made before its row is stored; at start every folder without
a row is a leftover of a ``kill -9`` and removed (:func:`tidy`), as are the partial
uploads, the half-written files of an atomic write (``*.tmp``) and the build results of
the submissions that will be built again.

Everything of a participant's is private to the server's user: the folders are 0700
(the sandbox, run by the same user, binds each bot's folder inside).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs

from referee.competition.records import Submission
from referee.competition.store import CompetitionStore

__all__ = ["Workspace", "make_private", "sweep_temporary", "tidy"]


@attrs.frozen
class Workspace:
    """The competition's files: ``incoming`` (uploads being received) and ``uploads``
    (one folder per submission)."""

    root: Path

    @property
    def incoming(self) -> Path:
        return self.root / "incoming"

    @property
    def uploads(self) -> Path:
        return self.root / "uploads"

    @property
    def replays(self) -> Path:
        """The ladder's replays (the game pages show them)."""
        return self.root / "replays"

    @property
    def logs(self) -> Path:
        """The ladder's bot logs."""
        return self.root / "logs"

    def folder(self, submission: Submission) -> Path:
        return self.uploads / submission.folder

    def bot_dir(self, submission: Submission) -> Path:
        """Where the bot runs from: its build's result, or its upload."""
        return self.folder(submission) / ("bot" if submission.build else "source")

    def create(self) -> None:
        for path in (self.root, self.incoming, self.uploads):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.incoming.chmod(0o700)
        self.uploads.chmod(0o700)  # a folder of an earlier version was 0755
        self.root.chmod(0o711)  # the sandbox binds folders inside; nobody lists them


def make_private(db: Path) -> None:
    """Make the database (and its journal files) readable by the server's user alone:
    it holds the digests of every token. SQLite makes later journal files with the
    database's mode. Blocking."""
    for path in (db, db.with_name(f"{db.name}-wal"), db.with_name(f"{db.name}-shm")):
        if path.exists():
            path.chmod(0o600)


def sweep_temporary(folder: Path) -> int:
    """Remove the half-written files (``.NAME.XXXX.tmp``) an atomic write killed
    midway left in ``folder``; how many. Blocking."""
    removed = 0
    if folder.is_dir():
        for leftover in folder.glob(".*.tmp"):
            leftover.unlink(missing_ok=True)
            removed += 1
    return removed


def tidy(store: CompetitionStore, workspace: Workspace) -> int:
    """Remove what a stopped server left half-made: partial uploads, folders without a
    submission, half-written replays, and the build results of submissions that will be
    built again. Blocking."""
    removed = sweep_temporary(workspace.replays)
    for leftover in workspace.incoming.iterdir():
        leftover.unlink(missing_ok=True)
        removed += 1
    known = store.folders()
    for folder in workspace.uploads.iterdir():
        if folder.name not in known:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    for sub in store.submissions():
        if sub.status.pending:
            for stale in ("bot", "bot.tar", "logs"):
                path = workspace.folder(sub) / stale
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
    return removed
