"""The season's aggregates: folded game by game (in batches, in any number of calls, by
two processes, or by one killed with SIGKILL at any moment), they are what a count over
every stored game gives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from season_games import recompute, store_games, stored_aggregates

from referee.competition import Season
from referee.competition import aggregates as aggregates_module
from referee.league import Meeting, ResultStore
from referee.ratings import OnlineRatings


def test_folding_in_batches_and_calls_gives_the_count_over_every_game(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "c.sqlite"
    store_games(db, 120)
    monkeypatch.setattr(aggregates_module, "BATCH", 7)
    with Season(db) as season:
        assert season.fold(limit=50).games == 50
        assert season.mark() == 50
        assert stored_aggregates(db) == recompute(db, upto=50)
        store_games(db, 40, seed=2, first=1000)
        folded = season.fold()
        assert (folded.games, folded.mark) == (110, 160)
        assert season.fold().games == 0
    assert stored_aggregates(db) == recompute(db)


def test_the_ratings_restored_from_the_aggregates_rate_on_as_if_from_the_first_game(
        tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    store_games(db, 60)
    with Season(db) as season:
        season.fold()
        restored = OnlineRatings(beliefs=season.beliefs())
    whole = OnlineRatings()
    with ResultStore(db, readonly=True) as store:
        for game in store.games():
            whole.update({s.bot: s.place for s in game.seats})
    assert restored.beliefs() == whole.beliefs()


@pytest.mark.slow
def test_two_processes_folding_at_once_fold_each_game_once(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    store_games(db, 200)
    script = ("import sys; from referee.competition import Season\n"
              "with Season(sys.argv[1]) as s:\n"
              "    while s.fold(limit=3).games: pass\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(db)]) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert stored_aggregates(db) == recompute(db)


FOLDER = """
import sys, random
sys.path.insert(0, sys.argv[2])
from season_games import store_games
from referee.competition import Season
db = sys.argv[1]
with Season(db) as season:
    print("ready", flush=True)
    for round in range(10_000):
        store_games(__import__("pathlib").Path(db), 5, seed=round, first=10 * round + 100)
        season.fold(limit=random.randint(1, 9))
"""


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.3, 0.9, 1.7])
def test_a_fold_killed_at_any_moment_leaves_the_aggregates_of_the_games_up_to_its_mark(
        tmp_path: Path, delay: float) -> None:
    db = tmp_path / "c.sqlite"
    store_games(db, 30)
    tests = str(Path(__file__).parent.parent)
    proc = subprocess.Popen([sys.executable, "-c", FOLDER, str(db), tests],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Season(db, readonly=True) as season:
        mark = season.mark()
    assert mark > 0
    # Every table is that of the games up to the mark; the time figures may be behind
    # (a kill after the games' transaction, before the figures'): the next fold makes them.
    stored, counted = stored_aggregates(db), recompute(db, upto=mark)
    assert {k: v for k, v in stored.items() if k != "figures"} == {
        k: v for k, v in counted.items() if k != "figures"}
    with Season(db) as season:  # the next fold goes on from the mark
        season.fold()
    assert stored_aggregates(db) == recompute(db)


def test_the_ladder_knows_each_tables_next_deal_and_open_meetings(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    with ResultStore(db) as store:
        store.add_meeting(Meeting("a,b/deals0-1", ("a", "b"), 0, 2, finished=True))
        store.add_meeting(Meeting("a,b/deals2-2", ("a", "b"), 2, 1))
        store.add_meeting(Meeting("a,b,c/deals0-0", ("a", "b", "c"), 0, 1))
    with Season(db) as season:
        assert season.next_deal(("a", "b")) == 3
        assert season.next_deal(("b", "a")) == 0
        assert season.next_deal(("a", "b", "c")) == 1
        assert season.meeting_sizes() == {2: 2, 3: 1}
        assert [m.name for m in season.open_meetings()] == ["a,b/deals2-2", "a,b,c/deals0-0"]
