"""A bot cannot win by slowing the others of its game (PROTOCOL.md section 9, "Time
basis"): a pondering hog (tests/hostile_bots/pondering_hog.py) keeps busy children
running while its opponents think and stops them while it thinks itself. Under the
default time basis its opponents are charged the CPU time they used, and none of them
times out."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from processes import live_children

from referee.core.clock import TimeBasis, TimeControl
from referee.core.outcomes import MatchSettings
from referee.core.schedule import match_games
from referee.core.specs import BotCommand, BotSpec
from referee.match.unit import play_unit
from referee.rules import Rules

ROOT = Path(__file__).resolve().parents[2]
HOG = ROOT / "tests" / "hostile_bots" / "pondering_hog.py"
RANDOM = ROOT / "sample_bots" / "random_bot.py"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"),
                       reason="needs /proc with the scheduler's statistics"),
]


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    yield
    assert live_children(zombies=True) == [], "the test left processes behind"


async def test_a_pondering_hog_makes_no_opponent_time_out(tmp_path: Path) -> None:
    bots = [BotSpec("hog", BotCommand((sys.executable, str(HOG), str(4 * (os.cpu_count() or 1)))))]
    bots += [BotSpec(f"random{i}", BotCommand((sys.executable, str(RANDOM), str(i))))
             for i in (1, 2, 3)]
    time = TimeControl(move_ms=30, reaction_ms=30, startup_ms=30_000)
    assert time.time_basis is TimeBasis.CPU  # the default
    settings = MatchSettings(time=time, log_dir=tmp_path / "logs", rules=Rules(hand_size=4))
    with trio.fail_after(300):
        outcomes = await play_unit(match_games([b.name for b in bots], 2, 1), bots, settings)
    forfeits = [(s.bot, s.forfeit) for o in outcomes for s in o.seats
                if s.bot != "hog" and s.forfeit is not None]
    assert forfeits == []
    assert all(not o.voided for o in outcomes)
