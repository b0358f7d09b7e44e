"""Units of work: the bot processes of a game start at once."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from processes import live_children

from referee.core.clock import TimeControl
from referee.core.faults import BotStartError
from referee.core.schedule import match_games
from referee.core.specs import BotCommand, BotSpec
from referee.match.game import MatchSettings
from referee.match.unit import play_unit

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"

# A random bot that says hello only once the other bot of its table has started too:
# it leaves a mark named after itself, then waits for the other's mark.
WAITS_FOR_THE_OTHER = r"""
import pathlib, runpy, sys, time
marks, me, other, bot = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
(marks / me).touch()
give_up = time.monotonic() + 20
while not (marks / other).exists() and time.monotonic() < give_up:
    time.sleep(0.01)
sys.argv = [bot, "1"]
runpy.run_path(bot, run_name="__main__")
"""


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    yield
    assert live_children(zombies=True) == [], "the test left processes behind"


def waiting_bot(marks: Path, me: str, other: str) -> BotSpec:
    return BotSpec(me, BotCommand((sys.executable, "-c", WAITS_FOR_THE_OTHER, str(marks),
                                   me, other, str(RANDOM_BOT))))


async def test_the_bots_of_a_game_start_at_once(tmp_path: Path) -> None:
    # One bot after the other, the first would wait for a bot not yet started and
    # miss its start-up time.
    bots = [waiting_bot(tmp_path, "a", "b"), waiting_bot(tmp_path, "b", "a")]
    settings = MatchSettings(time=TimeControl(startup_ms=10_000))
    with trio.fail_after(60):
        outcomes = await play_unit(match_games(["a", "b"], 1, 1), bots, settings)
    assert [s.forfeit for s in outcomes[0].seats] == [None, None]


async def test_a_bot_that_cannot_start_raises_once_the_others_have_settled(
    tmp_path: Path,
) -> None:
    missing = BotSpec("missing", BotCommand((str(tmp_path / "no-such-bot"),)))
    good = BotSpec("good", BotCommand((sys.executable, str(RANDOM_BOT), "1")))
    with trio.fail_after(60), pytest.raises(BotStartError, match="no-such-bot"):
        await play_unit(match_games(["good", "missing"], 1, 1), [good, missing],
                        MatchSettings())
