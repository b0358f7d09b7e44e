"""Executors take units from an async iterator, asking for one only when they can start
it: a ladder chooses each table as late as it can, on the latest ratings."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
import trio

from referee.core.schedule import ScheduledGame, WorkUnit, block_games
from referee.core.specs import BotCommand, BotSpec
from referee.league import runner
from referee.league.runner import LeagueJob, LocalExecutor, next_unit
from referee.match.game import MatchSettings


def unit(number: int) -> WorkUnit:
    games = tuple(block_games(("a", "b"), number, number)[:1])
    return WorkUnit(f"a,b/deals{number}-{number}/rot0", games)


async def test_a_unit_is_asked_for_only_when_a_slot_is_free(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    running = 0
    most = 0
    finished = 0
    asked_while: list[int] = []

    async def fake_play_unit(games: Sequence[ScheduledGame], *args: Any, **kwargs: Any) -> None:
        nonlocal running, most, finished
        running += 1
        most = max(most, running)
        await trio.sleep(0.01)
        running -= 1
        finished += 1

    monkeypatch.setattr(runner, "play_unit", fake_play_unit)

    async def source() -> AsyncIterator[WorkUnit]:
        for number in range(8):
            asked_while.append(running)
            await trio.sleep(0)  # a ladder may wait here (a pause, new bots)
            yield unit(number)

    bots = {name: BotSpec(name, BotCommand(["bot"])) for name in "ab"}
    job = LeagueJob(MatchSettings(), bots, record=lambda outcome: True,
                    is_stored=lambda game_id: False)
    await LocalExecutor(2).play(job, source())
    assert len(asked_while) == 8 and max(asked_while) <= 1 and most == 2
    assert finished == 8  # every unit played to its end


async def test_a_failing_source_stops_the_executor_with_its_own_error() -> None:
    async def source() -> AsyncIterator[WorkUnit]:
        raise ValueError("no more tables")
        yield unit(0)  # pragma: no cover

    job = LeagueJob(MatchSettings(), {}, record=lambda outcome: True,
                    is_stored=lambda game_id: False)
    with pytest.raises(ValueError, match="no more tables"):
        await LocalExecutor(2).play(job, source())


async def test_next_unit_takes_either_kind_of_iterator() -> None:
    assert await next_unit(iter([unit(0)])) == unit(0)
    assert await next_unit(iter([])) is None

    async def one() -> AsyncIterator[WorkUnit]:
        yield unit(1)

    units = one()
    assert await next_unit(units) == unit(1)
    assert await next_unit(units) is None
