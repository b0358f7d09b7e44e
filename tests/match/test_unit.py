"""Units of work: their bots, and the requests they are sent."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from processes import live_children
from taki_protocol import Answer, Decide, React

from referee.core.faults import BotStartError
from referee.core.outcomes import MatchSettings
from referee.core.schedule import match_games
from referee.core.specs import BotCommand, BotSpec
from referee.match.unit import play_unit
from referee.rules import Rules
from referee.shell.bots import BotConnection

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    yield
    assert live_children(zombies=True) == [], "the test left processes behind"


async def test_a_bot_that_cannot_start_raises_a_typed_error(tmp_path: Path) -> None:
    missing = BotSpec("missing", BotCommand((str(tmp_path / "no-such-bot"),)))
    good = BotSpec("good", BotCommand((sys.executable, str(RANDOM_BOT), "1")))
    with trio.fail_after(60), pytest.raises(BotStartError, match="no-such-bot"):
        await play_unit(match_games(["good", "missing"], 1, 1), [good, missing],
                        MatchSettings())


@pytest.mark.parametrize("players", [2, 4])
async def test_the_requests_built_without_checks_pass_them(
    players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The referee builds its requests with Decide.trusted / React.trusted: every one it
    # sends must be what the checked constructor builds from the same fields.
    checked: list[str] = []
    original = BotConnection.request

    async def request(self: BotConnection, message: Decide | React,
                      deadline_ms: int, **options: Any) -> tuple[Answer, float]:
        fields = {name: getattr(message, name) for name in message.FIELDS}
        assert type(message)(**fields) == message
        checked.append(message.TYPE)
        return await original(self, message, deadline_ms, **options)

    monkeypatch.setattr(BotConnection, "request", request)
    names = [f"random{i}" for i in range(players)]
    bots = [BotSpec(name, BotCommand((sys.executable, str(RANDOM_BOT), str(i))))
            for i, name in enumerate(names)]
    # The +3 Breaker rule, for react requests too.
    settings = MatchSettings(rules=Rules(plus3_rule=True))
    with trio.fail_after(120):
        await play_unit(match_games(names, 12, 1), bots, settings)
    assert "decide" in checked
    if players == 4:
        assert "react" in checked
