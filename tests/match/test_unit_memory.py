"""Units of games played by scripted bots in memory, through ``play_unit`` and its
``opener``: restarts after a crash or not, one bot per seat rotation, a handshake fault
on every start, bytes written after ``game_over``. No process is started.

No replays or logs are written here: the unit writes them in a thread, and while a thread
runs, the autojump clock sees every task waiting and jumps to the next deadline
(test_game_memory.py checks the replays of games with the same bots)."""

from __future__ import annotations

from collections.abc import Sequence

import trio
from memory_bots import ScriptedBot, answer_after_game_over, die, wrong_version
from memory_play import TIME
from taki_protocol import GameStart
from trio.testing import MockClock

from referee.core.faults import FaultReason
from referee.core.outcomes import GameOutcome, MatchSettings
from referee.core.schedule import match_games
from referee.core.specs import BotCommand, BotSpec
from referee.match.unit import play_unit
from referee.testing import MemoryOpener

#: What a spec needs to name a bot; the opener never runs it.
UNUSED = BotCommand(("unused",))


async def play(
    bots: Sequence[ScriptedBot], games: int, **settings: object
) -> tuple[list[GameOutcome], MemoryOpener]:
    opener = MemoryOpener({bot.name: bot for bot in bots})
    config = MatchSettings(time=TIME, **settings)  # type: ignore[arg-type]
    schedule = match_games([b.name for b in bots], games, 1)
    specs = [BotSpec(b.name, UNUSED) for b in bots]
    with trio.fail_after(3600):  # virtual time: a unit that hangs fails, at once
        outcomes = await play_unit(schedule, specs, config, match_name="m", opener=opener)
    assert [o.game.game_id for o in outcomes] == [f"game{i + 1}" for i in range(games)]
    return outcomes, opener


def forfeit(outcome: GameOutcome, bot: str) -> tuple[FaultReason, str] | None:
    seat = next(s for s in outcome.seats if s.bot == bot)
    return None if seat.forfeit is None else (seat.forfeit.reason, seat.forfeit.detail)


async def test_a_crashed_bot_is_started_again_for_the_next_game(
    autojump_clock: MockClock
) -> None:
    hostile = ScriptedBot("hostile", die(at=2, stderr="hostile: leaving\n"))
    outcomes, opener = await play([hostile, ScriptedBot("b")], games=3)
    for outcome in outcomes:
        assert forfeit(outcome, "hostile") == (
            FaultReason.CRASH,
            "closed its output: the bot exited with status 2; its last stderr lines:\n"
            "hostile: leaving",
        )
    assert opener.starts["hostile"] == 3 and hostile.runs == [2, 2, 2]


async def test_a_crashed_bot_is_not_started_again_when_restart_is_off(
    autojump_clock: MockClock
) -> None:
    hostile = ScriptedBot("hostile", die(at=2))
    outcomes, opener = await play([hostile, ScriptedBot("b")], games=3,
                                  restart=False)
    first = forfeit(outcomes[0], "hostile")
    assert first is not None and first[0] is FaultReason.CRASH
    said = "the bot is not restarted after it stopped in an earlier game"
    for outcome in outcomes[1:]:
        assert forfeit(outcome, "hostile") == (FaultReason.CRASH,
                                               f"{said} (crash: {first[1]})")
        assert outcome.actions == 0
    assert opener.starts["hostile"] == 1


async def test_each_seat_rotation_has_bots_of_its_own(
    autojump_clock: MockClock
) -> None:
    # Four games of two deals, each dealt to both seatings: each bot is started once per
    # rotation and plays one game of each deal.
    a, b = ScriptedBot("a"), ScriptedBot("b")
    outcomes, opener = await play([a, b], games=4)
    assert opener.starts == {"a": 2, "b": 2}
    assert all(s.forfeit is None for o in outcomes for s in o.seats)
    assert sorted(m.game_id for m in a.of_type(GameStart)) == ["game1", "game2", "game3",
                                                               "game4"]


async def test_a_handshake_fault_keeps_its_reason_on_every_start(
    autojump_clock: MockClock
) -> None:
    hostile = ScriptedBot("hostile", hello=wrong_version)
    outcomes, opener = await play([hostile, ScriptedBot("b")], games=2)
    for outcome in outcomes:
        reason, detail = forfeit(outcome, "hostile") or (None, "")
        assert reason is FaultReason.PROTOCOL and "protocol version" in detail
    assert opener.starts["hostile"] == 2


async def test_an_answer_written_after_game_over_forfeits_the_next_game(
    autojump_clock: MockClock
) -> None:
    # Games 1 and 3 are the first rotation's bots, 2 and 4 the second's: each bot's
    # first game is clean, and what it wrote after that game's game_over forfeits its
    # next one.
    hostile = ScriptedBot("hostile", after_game_over=answer_after_game_over)
    outcomes, _ = await play([hostile, ScriptedBot("b")], games=4)
    assert [forfeit(o, "hostile") for o in outcomes[:2]] == [None, None]
    for outcome in outcomes[2:]:
        reason, detail = forfeit(outcome, "hostile") or (None, "")
        assert reason is FaultReason.PROTOCOL and "before the" in detail, detail
