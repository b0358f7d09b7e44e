"""The gate of uploads: a participant's uploads refused in a row over a limit wait
longer and longer for their answer (so that a flood of them slows to a few requests a
second), each participant's own, and forgotten after a minute."""

from __future__ import annotations

from pathlib import Path

from referee.competition.accept import STRIKE_MEMORY_S, UploadGate
from referee.competition.config import CompetitionConfig
from referee.competition.disk import DiskGauge
from referee.competition.store import CompetitionStore
from referee.competition.workspace import Workspace


def test_uploads_refused_in_a_row_wait_longer_until_a_minute_passes(tmp_path: Path) -> None:
    with CompetitionStore(tmp_path / "c.sqlite") as store:
        gate = UploadGate(CompetitionConfig(tmp_path / "c.toml"), store,
                          Workspace(tmp_path / "files"), DiskGauge(tmp_path, 0))
        waits = [gate.strike("mallory", float(t)) for t in range(8)]
        assert waits == [0, 0.5, 1, 2, 4, 8, 8, 8]
        assert gate.strike("alice", 8.0) == 0  # each participant's own
        assert gate.strike("mallory", 8.0 + STRIKE_MEMORY_S + 1) == 0
        assert gate.strike("mallory", 8.0 + STRIKE_MEMORY_S + 2) == 0.5
