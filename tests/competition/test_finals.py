"""The finals: a full round robin among the latest bots, in a database of their own."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.competition.finals import FinalsSettings, run_finals
from referee.competition.ladder_control import GameLanded
from referee.core.schedule import total_games
from referee.core.specs import BotCommand, BotSpec
from referee.league.store import ResultStore

REPO = Path(__file__).resolve().parents[2]


def bot(name: str, args: list[str]) -> BotSpec:
    return BotSpec(name, BotCommand([sys.executable, *args]))


BOTS = [
    bot("greedy@3", [str(REPO / "sample_bots" / "greedy_bot.py")]),
    bot("random@1", [str(REPO / "sample_bots" / "random_bot.py"), "1"]),
    bot("random@2", [str(REPO / "sample_bots" / "random_bot.py"), "2"]),
]


async def test_the_finals_play_every_table_and_write_the_standings(tmp_path: Path) -> None:
    settings = FinalsSettings(deals=2, concurrency=2, seed=9, resamples=20)
    heard: list[GameLanded] = []
    path = tmp_path / "out" / "standings.json"
    db = tmp_path / "finals.sqlite"
    standings = await run_finals(db, BOTS, settings, path, on_game=heard.append)
    with ResultStore(db, readonly=True) as store:
        assert store.game_count() == total_games(3, 2, 2) == 12
    assert len(heard) == 12 and heard[-1].stored == 12
    assert [s.place for s in standings] == [1, 2, 3]
    assert {s.bot for s in standings} == {b.name for b in BOTS}
    assert all(s.games == 8 for s in standings)
    written = json.loads(path.read_text())
    assert [s["bot"] for s in written["standings"]] == [s.bot for s in standings]
    assert written["standings"][0]["low"] is not None
    # Again (after a kill, say): nothing is missing, nothing is played.
    heard.clear()
    again = await run_finals(db, BOTS, settings, path, on_game=heard.append)
    assert heard == [] and [s.bot for s in again] == [s.bot for s in standings]


async def test_finals_need_a_table_of_bots(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 2 bots, got 1"):
        await run_finals(tmp_path / "f.sqlite", BOTS[:1], FinalsSettings(), tmp_path / "s.json")
    assert not (tmp_path / "f.sqlite").exists()
