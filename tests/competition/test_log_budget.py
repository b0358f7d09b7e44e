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


def test_a_file_belongs_to_the_longest_name_it_ends_with_after_a_dash(tmp_path: Path) -> None:
    # names with dashes and dotted numbers of their own; a file of nobody's
    names = {"u1-my-bot_1.log": "my-bot@1", "u2-bot_1.3.log": "bot@1",
             "u3-x.2.log": "x.2", "u4-x.2.7.log": "x.2", "u5-x.7.log": "x",
             "u6-nobody.log": None, "bot_1.log": None, "u7-bot_1.txt": None}
    for name in names:
        log(tmp_path, name, 100, age=1)
    usage = trim_logs(tmp_path, ["my-bot@1", "bot@1", "x.2", "x"],
                      LogBudget(per_bot=100, total=10_000))
    # each bot keeps 100 bytes: one file each; the files of nobody are never a bot's
    kept = {p.name for p in tmp_path.iterdir()}
    assert {"u1-my-bot_1.log", "u2-bot_1.3.log", "u5-x.7.log", "u6-nobody.log",
            "bot_1.log", "u7-bot_1.txt"} <= kept
    assert len(kept & {"u3-x.2.log", "u4-x.2.7.log"}) == 1
    assert usage.evicted == 1


def test_a_thousand_bots_and_their_files_are_sorted_out_by_name(tmp_path: Path) -> None:
    bots = [f"bot{i:04d}@1" for i in range(1000)]
    for i in range(3000):
        log(tmp_path, f"g{i}-bot{i % 1000:04d}_1.log", 10, age=i)
    usage = trim_logs(tmp_path, bots, LogBudget(per_bot=20, total=10**9))
    # each bot had 3 files of 10 bytes: its oldest goes
    assert usage.evicted == 1000 and usage.files == 2000
    assert not (tmp_path / "g2999-bot0999_1.log").exists()
    assert (tmp_path / "g0-bot0000_1.log").exists()
