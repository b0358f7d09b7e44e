"""The server's rating history (``referee.competition.history``): a snapshot of the
ladder's live ratings with the full fit of every game, every :data:`EVERY_S` while
games land, and sooner while the season is young (when the rated seats grew by a tenth,
and at least :data:`EVERY_SEATS`, since the last one). The fit is made in a process of
its own (at the builds' priority) so it never holds the interpreter the ladder's clocks
run in."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import trio

from referee.competition import CompetitionHost, Snapshot, record_snapshot

__all__ = ["EVERY_S", "EVERY_SEATS", "run_history_link", "snapshot_now"]

#: How often a snapshot is taken while games land.
EVERY_S: Final = 600.0
#: The fewest new rated seats (a heads-up game has two) that bring a snapshot sooner.
EVERY_SEATS: Final = 40
#: How often the ladder's ratings are looked at.
LOOK_S: Final = 5.0
#: The longest a full fit may take; past it the snapshot keeps the live ratings alone.
FIT_TIMEOUT_S: Final = 300.0
#: The fit's priority: below the ladder's games, as the builds and checks.
FIT_NICENESS: Final = 10


async def _fit(db: Path) -> dict[str, float]:
    """The full fit of the stored games, in a process of its own; empty when it fails
    or takes longer than FIT_TIMEOUT_S (the snapshot then has the live ratings alone)."""
    command = [sys.executable, "-m", "referee.competition.history", str(db)]
    with trio.move_on_after(FIT_TIMEOUT_S):
        try:
            done = await trio.run_process(
                command, capture_stdout=True, capture_stderr=True, check=False,
                preexec_fn=lambda: os.nice(FIT_NICENESS))
        except OSError:
            return {}
        if done.returncode == 0:
            try:
                fitted = json.loads(done.stdout)
            except ValueError:
                return {}
            return {str(k): float(v) for k, v in fitted.items()}
    return {}


async def snapshot_now(db: Path, ratings: Sequence[Any], *, fit: bool = True) -> None:
    """Store the ladder's live ``ratings`` (``LiveRating``), with the full fit of the
    games when ``fit``."""
    fitted = await _fit(db) if fit else {}
    rows = [Snapshot(r.bot, r.elo, r.low, r.high, r.games, r.active, fitted.get(r.bot))
            for r in ratings]
    if rows:
        await trio.to_thread.run_sync(record_snapshot, db, time.time(), rows)


def _due(seats: int, last_seats: int, waited: float) -> bool:
    """Whether a snapshot is due: ``seats`` rated now, ``last_seats`` at the last one,
    ``waited`` seconds since it."""
    grown = seats - last_seats
    if grown <= 0:
        return False
    return (not last_seats or waited >= EVERY_S
            or grown >= max(EVERY_SEATS, last_seats // 10))


async def run_history_link(state: CompetitionHost, db: Path, *,
                           task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                           ) -> None:
    """Take the snapshots (:func:`_due`) until cancelled."""
    task_status.started()
    last_seats, last_at = 0, 0.0
    while True:
        ladder = state.ladder
        ratings = tuple(ladder.ratings()) if ladder is not None else ()
        seats = sum(r.games for r in ratings)
        if ratings and _due(seats, last_seats, time.monotonic() - last_at):
            try:
                await snapshot_now(db, ratings)
            except (OSError, sqlite3.Error, subprocess.SubprocessError):
                pass  # the next look tries again
            else:
                last_seats, last_at = seats, time.monotonic()
        await trio.sleep(LOOK_S)
