"""The ladder's bot logs stay within their budget: per bot version and in all, the
oldest files evicted first."""

from __future__ import annotations

import os
from pathlib import Path

from referee.competition.log_budget import LogBudget, trim_logs


def log(folder: Path, name: str, size: int, age: int) -> Path:
    path = folder / name
    path.write_bytes(b"x" * size)
    os.utime(path, (1_000_000 - age, 1_000_000 - age))
    return path


def test_each_bot_keeps_its_newest_logs_within_its_share(tmp_path: Path) -> None:
    # "b@1" is a suffix of "ab@1": each file belongs to the longest name it ends with
    old_b = log(tmp_path, "u1-b_1.log", 1000, age=50)
    new_b = [log(tmp_path, f"u{i}-b_1.log", 1000, age=40 - i) for i in range(2, 5)]
    ab = [log(tmp_path, f"u{i}-ab_1.{i}.log", 1000, age=30 - i) for i in range(2)]
    usage = trim_logs(tmp_path, ["b@1", "ab@1"], LogBudget(per_bot=3000, total=10_000))
    assert not old_b.exists()
    assert all(p.exists() for p in [*new_b, *ab])
    assert (usage.bytes, usage.files, usage.evicted) == (5000, 5, 1)


def test_the_total_evicts_the_oldest_of_anyone(tmp_path: Path) -> None:
    files = [log(tmp_path, f"u{i}-{bot}.log", 1000, age=100 - i)
             for i, bot in enumerate(["a_1", "b_1", "stranger", "a_1", "b_1"])]
    usage = trim_logs(tmp_path, ["a@1", "b@1"], LogBudget(per_bot=10_000, total=3000))
    assert [p.exists() for p in files] == [False, False, True, True, True]
    assert (usage.bytes, usage.evicted) == (3000, 2)
    assert trim_logs(tmp_path / "none", [], LogBudget(1, 1)).files == 0
