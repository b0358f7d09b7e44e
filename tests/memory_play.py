"""Playing one game with scripted in-memory bots (tests/memory_bots.py) through the real
game loop (GameReferee)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import attrs
import trio
from memory_bots import ScriptedBot

from referee.core.clock import TimeControl
from referee.core.outcomes import GameOutcome, MatchSettings
from referee.core.replay import verify
from referee.core.schedule import ScheduledGame
from referee.match.game import GameReferee, outcome_of
from referee.rules import GameResult
from referee.shell.bots import BotConnection
from referee.testing import open_memory_bot

#: Times on Trio's clock: under the autojump clock a stalled bot costs no real time.
MOVE_MS = 1000
TIME = TimeControl(move_ms=MOVE_MS, reaction_ms=1000, startup_ms=2000, grace_ms=5)


@attrs.frozen
class Played:
    referee: GameReferee
    result: GameResult
    outcome: GameOutcome


async def play_game(
    bots: Sequence[ScriptedBot],
    seed: int = 1,
    settings: MatchSettings | None = None,
    game_id: str = "game1",
) -> Played:
    """One game between ``bots`` (seat i is bots[i]) through GameReferee, each bot in
    memory; checks what must hold whatever the bots did: the replay re-plays to the
    result, and every bot is stopped."""
    settings = settings or MatchSettings(time=TIME)
    game = ScheduledGame(game_id, "block", 0, 0, seed, tuple(b.name for b in bots))
    async with contextlib.AsyncExitStack() as stack:
        conns: list[BotConnection] = [
            await stack.enter_async_context(open_memory_bot(
                bot.name, bot, startup_ms=settings.time.startup_ms,
                grace_ms=settings.time.grace_ms))
            for bot in bots
        ]
        referee = GameReferee(game, conns, settings)
        with trio.fail_after(3600):  # virtual time: a loop that hangs fails, at once
            result = await referee.run()
    for conn in conns:
        assert conn.process.returncode is not None, f"{conn.name} is still running"
    assert verify(referee.replay) == result
    outcome = outcome_of(game, result, None, referee.times.seats())
    return Played(referee, result, outcome)
