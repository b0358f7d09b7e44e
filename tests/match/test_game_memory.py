"""The game loop's rules, played by scripted bots in memory (tests/memory_bots.py):
timeouts, forfeits and their typed reasons, strikes, the +3 Breaker window, the
last-card penalty, a game won by the last seat standing. No process is started, and
under Trio's autojump clock a bot that stalls for seconds costs no real time.

Every game's replay is re-played by the rules engine (``memory_play.play_game``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
import trio
from memory_bots import (
    ScriptedBot,
    answer_ahead,
    breaks,
    close_output,
    die,
    exit_at_start,
    extra_answer,
    garbage,
    huge_string,
    illegal,
    never_declares,
    no_hello,
    padded_answer,
    stall,
    wrong_id,
    wrong_version,
)
from memory_play import MOVE_MS, TIME, Played, play_game
from taki_protocol import Error, GameOver, GameStart, Hello, React, Shutdown
from trio.testing import MockClock

from referee.core.clock import TimeControl
from referee.core.faults import FaultPolicy, FaultReason
from referee.core.outcomes import MatchSettings, SeatForfeit
from referee.rules import EndReason, Rules
from referee.rules.events import Drew, SeatEvent

# Each test takes ``autojump_clock``: pytest-trio then runs it on Trio's MockClock, which
# jumps to the next deadline whenever every task waits.

GRACE = TIME.grace_ms
#: The +3 Breaker rule at four seats: with this seed and the first legal actions, a +3
#: opens a window in which one seat holds the Breaker (the deck has one).
BREAKER_RULES = Rules(plus3_rule=True)
BREAKER_SEED = 20


def forfeit_of(played: Played, bot: str) -> SeatForfeit | None:
    return next(s.forfeit for s in played.outcome.seats if s.bot == bot)


def only_forfeit(played: Played, bot: str = "hostile") -> SeatForfeit:
    """``bot`` forfeited, placed last, and nobody else forfeited."""
    for seat in played.outcome.seats:
        if seat.bot == bot:
            assert seat.forfeit is not None, f"{bot} did not forfeit"
            assert seat.place == len(played.outcome.seats)
        else:
            assert seat.forfeit is None, f"{seat.bot} forfeited: {seat.forfeit}"
    forfeit = forfeit_of(played, bot)
    assert forfeit is not None
    return forfeit


def seat_log(played: Played, seat: int) -> list[dict[str, Any]]:
    """The replay entries of a seat: its actions and its forfeit."""
    log = played.referee.replay.log
    return [e for e in log if e.get("seat") == seat or e.get("forfeit") == seat]


# ----------------------------------------------------------------------- a clean game


async def test_two_scripted_bots_play_a_game_to_its_end(autojump_clock: MockClock) -> None:
    a, b = ScriptedBot("a"), ScriptedBot("b")
    start = trio.current_time()
    played = await play_game([a, b])
    assert played.result.reason == EndReason.WIN
    assert played.outcome.reason == EndReason.WIN
    assert all(s.forfeit is None for s in played.outcome.seats)
    assert sorted(s.place for s in played.outcome.seats) == [1, 2]
    # Every action of the game is an answer of a bot, and every answer was played.
    assert a.requests + b.requests == played.result.actions > 0
    for seat, bot in enumerate((a, b)):
        assert isinstance(bot.seen[0], Hello)
        assert bot.of_type(GameStart)[0].seat == seat
        assert len(bot.of_type(GameOver)) == 1
        assert isinstance(bot.seen[-1], Shutdown)  # and it was told to stop
        assert played.outcome.seats[seat].time.decisions == bot.requests
    assert trio.current_time() == start  # nobody waited for anything


# ------------------------------------------------------------------------- timeouts


@pytest.mark.parametrize(("ms", "late"), [(MOVE_MS + GRACE - 1, False),
                                          (MOVE_MS + GRACE + 1, True)])
async def test_an_answer_within_the_grace_counts_and_one_past_it_forfeits(
    autojump_clock: MockClock, ms: int, late: bool
) -> None:
    slow = ScriptedBot("hostile", stall(at=3, ms=ms))
    played = await play_game([slow, ScriptedBot("b")])
    if late:
        forfeit = only_forfeit(played)
        assert forfeit == SeatForfeit(FaultReason.TIMEOUT, f"no answer within {MOVE_MS} ms")
        assert slow.runs == [3]
        error = slow.of_type(Error)
        assert error == [] or error[0].reason == "timeout"
    else:
        assert forfeit_of(played, "hostile") is None
        use = played.outcome.seats[0].time
        assert max(use.times_ms) == ms and use.near_misses == 1


@pytest.mark.parametrize(("increment_ms", "forfeits_at", "allowed_ms"), [(0, 4, 100),
                                                                          (100, 5, 200)])
async def test_the_bank_runs_out(
    autojump_clock: MockClock, increment_ms: int, forfeits_at: int, allowed_ms: int
) -> None:
    # 300 ms a decision from a bank of 1000 (plus the increment after each decision):
    # the decision whose allowance is below 300 ms is the one that forfeits.
    time = TimeControl(move_ms=None, bank_ms=1000, increment_ms=increment_ms,
                       reaction_ms=1000, startup_ms=2000, grace_ms=0)
    slow = ScriptedBot("hostile", stall(ms=300))
    played = await play_game([slow, ScriptedBot("b")], settings=MatchSettings(time=time))
    forfeit = only_forfeit(played)
    assert forfeit == SeatForfeit(FaultReason.TIMEOUT, f"no answer within {allowed_ms} ms")
    assert slow.runs == [forfeits_at]


async def test_a_reaction_has_its_own_allowance(autojump_clock: MockClock) -> None:
    # 500 ms for each +3 Breaker reaction, five times the move limit and half the
    # reaction limit: never late, and never charged to the seat's clock.
    time = TimeControl(move_ms=100, reaction_ms=1000, startup_ms=2000, grace_ms=GRACE)
    bots = [ScriptedBot(f"b{i}", stall(ms=500, react_only=True)) for i in range(4)]
    played = await play_game(bots, BREAKER_SEED, MatchSettings(rules=BREAKER_RULES, time=time))
    assert all(s.forfeit is None for s in played.outcome.seats)
    assert sum(len(b.of_type(React)) for b in bots) > 0
    assert all(clock.used_ms == 0 for clock in played.referee.clocks)


async def test_a_reaction_past_its_deadline_forfeits(autojump_clock: MockClock) -> None:
    bots = [ScriptedBot(f"b{i}") for i in range(4)]
    bots[1] = ScriptedBot("hostile", stall(ms=TIME.reaction_ms + GRACE + 1, react_only=True))
    played = await play_game(bots, BREAKER_SEED, MatchSettings(rules=BREAKER_RULES, time=TIME))
    forfeit = only_forfeit(played)
    assert forfeit == SeatForfeit(FaultReason.TIMEOUT,
                                  f"no answer within {TIME.reaction_ms} ms")
    # Its last request was a reaction, then it was told why it forfeits.
    assert [type(m) for m in bots[1].seen[-2:]] == [React, Error]


# -------------------------------------------------------------------------- forfeits


@pytest.mark.parametrize(
    ("make", "reason", "detail", "requests"),
    [
        (partial(ScriptedBot, "hostile", die(at=2)), "crash",
         "closed its output: the bot exited with status 2", 2),
        (partial(ScriptedBot, "hostile", close_output(at=2)), "crash", "closed its output", 2),
        (partial(ScriptedBot, "hostile", hello=exit_at_start), "crash", "exited with status 3", 0),
        (partial(ScriptedBot, "hostile", stall(at=2)), "timeout", "no answer within 1000 ms", 2),
        (partial(ScriptedBot, "hostile", hello=no_hello), "timeout",
         "no hello within the startup time of 2000 ms", 0),
        (partial(ScriptedBot, "hostile", garbage(at=2)), "protocol", "msgpack map", 2),
        (partial(ScriptedBot, "hostile", wrong_id(at=2)), "protocol", "answer for request", 2),
        (partial(ScriptedBot, "hostile", extra_answer(at=1)), "protocol", "answer for request", 1),
        (partial(ScriptedBot, "hostile", huge_string(at=2)), "protocol", "2147483648", 2),
        (partial(ScriptedBot, "hostile", padded_answer(at=2)), "protocol",
         "over the maximum message size of 4096 bytes", 2),
        (partial(ScriptedBot, "hostile", answer_ahead(at=2)), "protocol", "sent before the", 2),
        (partial(ScriptedBot, "hostile", hello=wrong_version), "protocol", "protocol version", 0),
        (partial(ScriptedBot, "hostile", illegal(at=2)), "illegal",
         "choice 2 is not an index of the 2 legal actions", 2),
    ],
    ids=["dies", "closes-output", "exits-at-start", "stalls", "no-hello", "garbage",
         "wrong-id", "extra-answer", "huge-string", "padded-answer", "answer-ahead",
         "wrong-version", "illegal"],
)
async def test_each_fault_forfeits_with_its_typed_reason(
    autojump_clock: MockClock, make: Callable[[], ScriptedBot], reason: str, detail: str,
    requests: int,
) -> None:
    bot, other = make(), ScriptedBot("b")
    played = await play_game([bot, other])
    forfeit = only_forfeit(played)
    assert forfeit.reason is FaultReason(reason)
    assert detail in forfeit.detail
    assert bot.runs == [requests]  # it forfeited at the request that it got wrong
    # The others learn the reason; the game goes on without the forfeited seat.
    (game_over,) = other.of_type(GameOver)
    standing = next(s for s in game_over.ranking if s.forfeit is not None)
    assert standing.seat == 0 and standing.forfeit.reason == reason
    assert played.result.reason == EndReason.LAST_STANDING


async def test_the_forfeited_bot_is_told_why(autojump_clock: MockClock) -> None:
    bot = ScriptedBot("hostile", illegal(at=2))
    played = await play_game([bot, ScriptedBot("b")])
    forfeit = only_forfeit(played)
    (error,) = bot.of_type(Error)
    assert (error.reason, error.message) == ("illegal", forfeit.detail)
    assert bot.of_type(GameOver) == []  # nothing follows the error


async def test_a_crashed_bots_stderr_stays_with_the_referee(autojump_clock: MockClock) -> None:
    secret = "scripted: the hand was 3 blue\n"
    witness = ScriptedBot("witness")
    played = await play_game([ScriptedBot("hostile", die(at=2, stderr=secret)), witness])
    forfeit = only_forfeit(played)
    assert secret.strip() in forfeit.detail  # the results keep it
    (game_over,) = witness.of_type(GameOver)
    told = next(s.forfeit for s in game_over.ranking if s.forfeit is not None)
    assert (told.reason, told.detail) == ("crash",
                                          "closed its output: the bot exited with status 2")


async def test_the_last_seat_standing_wins(autojump_clock: MockClock) -> None:
    bots = [ScriptedBot("a", die(at=1)), ScriptedBot("b"), ScriptedBot("c", stall(at=2))]
    played = await play_game(bots)
    assert played.result.reason == EndReason.LAST_STANDING
    assert played.result.winner == 1
    places = {s.bot: s.place for s in played.outcome.seats}
    assert places["b"] == 1 and sorted(places.values()) == [1, 2, 3]
    reasons = {s.bot: None if s.forfeit is None else s.forfeit.reason
               for s in played.outcome.seats}
    assert reasons == {"a": FaultReason.CRASH, "b": None, "c": FaultReason.TIMEOUT}


# --------------------------------------------------------------------------- strikes


def strikes(n: int) -> MatchSettings:
    return MatchSettings(time=TIME, fault_policy=FaultPolicy.STRIKES, strikes=n)


async def test_strikes_absorb_illegal_answers_until_the_last(autojump_clock: MockClock) -> None:
    bot = ScriptedBot("hostile", illegal())
    played = await play_game([bot, ScriptedBot("b")], settings=strikes(3))
    assert only_forfeit(played).reason is FaultReason.ILLEGAL
    mine = seat_log(played, 0)
    # Two default actions (strikes 1 and 2) chosen by the referee, then the third
    # strike forfeits.
    assert ["action" in e for e in mine] == [True, True, False]
    assert [e.get("ms") for e in mine[:2]] == [None, None]
    assert bot.runs == [3]


async def test_strikes_absorb_timeouts_until_the_last(autojump_clock: MockClock) -> None:
    bot = ScriptedBot("hostile", stall(ms=MOVE_MS + GRACE + 100))
    played = await play_game([bot, ScriptedBot("b")], settings=strikes(2))
    assert only_forfeit(played).reason is FaultReason.TIMEOUT
    assert ["action" in e for e in seat_log(played, 0)] == [True, False]


async def test_a_late_answer_under_strikes_is_dropped_and_the_game_goes_on(
    autojump_clock: MockClock,
) -> None:
    # The late answer to the first request reaches the referee while the bot's next
    # request is open: it is not taken for the answer to that one.
    bot = ScriptedBot("hostile", stall(at=1, ms=MOVE_MS + GRACE + 100))
    played = await play_game([bot, ScriptedBot("b")], settings=strikes(3))
    assert all(s.forfeit is None for s in played.outcome.seats)
    assert played.referee.strikes == [1, 0]
    first, *rest = [e for e in seat_log(played, 0) if "action" in e]
    assert first.get("ms") is None and all(e.get("ms") is not None for e in rest)
    assert bot.requests == len(rest) + 1


async def test_strikes_still_forfeit_a_protocol_fault(autojump_clock: MockClock) -> None:
    played = await play_game([ScriptedBot("hostile", garbage(at=2)), ScriptedBot("b")],
                             settings=strikes(5))
    assert only_forfeit(played).reason is FaultReason.PROTOCOL
    assert played.referee.strikes == [0, 0]


# ----------------------------------------------------------------- the Breaker window


def breaker_windows(bots: list[ScriptedBot]) -> dict[float, list[int]]:
    """The seats asked to react, by the time (Trio's clock) they were asked."""
    windows: dict[float, list[int]] = {}
    for seat, bot in enumerate(bots):
        for message, at in zip(bot.seen, bot.seen_at, strict=True):
            if isinstance(message, React):
                windows.setdefault(at, []).append(seat)
    return windows


def breaks_of(played: Played) -> list[int]:
    return [e.seat for e in played.referee.state.events
            if isinstance(e, SeatEvent) and e.kind == "break"]


async def test_every_other_seat_is_asked_at_once_in_a_breaker_window(
    autojump_clock: MockClock,
) -> None:
    bots = [ScriptedBot(f"b{i}", stall(ms=400, react_only=True), strategy=breaks)
            for i in range(4)]
    played = await play_game(bots, BREAKER_SEED, MatchSettings(rules=BREAKER_RULES, time=TIME))
    # Asked one after the other, each seat would be asked 400 ms after the previous one.
    windows = breaker_windows(bots)
    assert windows and all(len(seats) == 3 for seats in windows.values())
    assert breaks_of(played) != []


async def test_the_breaker_breaks_however_late_within_its_allowance(
    autojump_clock: MockClock,
) -> None:
    # The holder answers last, after the others passed: the window waits for it.
    plain = [ScriptedBot(f"b{i}", strategy=breaks) for i in range(4)]
    played = await play_game(plain, BREAKER_SEED,
                             MatchSettings(rules=BREAKER_RULES, time=TIME))
    (breaker,) = breaks_of(played)
    slow = [ScriptedBot(f"b{i}", strategy=breaks) for i in range(4)]
    slow[breaker] = ScriptedBot(f"b{breaker}", stall(ms=900, react_only=True),
                                strategy=breaks)
    again = await play_game(slow, BREAKER_SEED, MatchSettings(rules=BREAKER_RULES, time=TIME))
    assert breaks_of(again) == [breaker]
    # The same game: its outcome does not depend on who answered first.
    assert actions(again) == actions(played)


def actions(played: Played) -> list[tuple[Any, Any]]:
    return [(e.get("seat"), e.get("action")) for e in played.referee.replay.log]


async def test_a_seat_that_times_out_in_the_window_forfeits_and_the_break_stands(
    autojump_clock: MockClock,
) -> None:
    plain = [ScriptedBot(f"b{i}", strategy=breaks) for i in range(4)]
    played = await play_game(plain, BREAKER_SEED,
                             MatchSettings(rules=BREAKER_RULES, time=TIME))
    (breaker,) = breaks_of(played)
    window = next(iter(breaker_windows(plain).values()))
    sleeper = next(seat for seat in window if seat != breaker)
    bots = [ScriptedBot(f"b{i}", strategy=breaks) for i in range(4)]
    bots[sleeper] = ScriptedBot("hostile", stall(react_only=True), strategy=breaks)
    again = await play_game(bots, BREAKER_SEED, MatchSettings(rules=BREAKER_RULES, time=TIME))
    assert only_forfeit(again).reason is FaultReason.TIMEOUT
    assert breaker in breaks_of(again)


# ------------------------------------------------------------------- the last card


async def test_a_bot_that_never_declares_last_card_draws_the_penalty(
    autojump_clock: MockClock,
) -> None:
    played = await play_game([ScriptedBot("never", strategy=never_declares),
                              ScriptedBot("always")], seed=4)
    penalties = [e for e in played.referee.state.events
                 if isinstance(e, Drew) and e.reason == "last_card"]
    assert penalties, "the seed no longer brings the bot down to one card"
    assert {(e.seat, e.number) for e in penalties} == {(0, Rules().last_card_penalty)}


async def test_no_penalty_without_the_last_card_rule(autojump_clock: MockClock) -> None:
    settings = MatchSettings(time=TIME, rules=Rules(last_card_penalty=0))
    played = await play_game([ScriptedBot("never", strategy=never_declares),
                              ScriptedBot("always")], seed=4, settings=settings)
    assert not [e for e in played.referee.state.events
                if isinstance(e, Drew) and e.reason == "last_card"]


async def test_an_illegal_reaction_forfeits_and_the_window_closes(
    autojump_clock: MockClock,
) -> None:
    bots = [ScriptedBot(f"b{i}", strategy=breaks) for i in range(4)]
    bots[2] = ScriptedBot("hostile", illegal(react_only=True), strategy=breaks)
    played = await play_game(bots, BREAKER_SEED, MatchSettings(rules=BREAKER_RULES, time=TIME))
    forfeit = only_forfeit(played)
    assert forfeit.reason is FaultReason.ILLEGAL and "legal actions" in forfeit.detail
    assert isinstance(bots[2].seen[-2], React)


# ------------------------------------------------------------------ an interrupted game


async def test_an_interrupted_game_stops_a_thinking_bot_at_once(
    autojump_clock: MockClock,
) -> None:
    """A run interrupted (Ctrl-C, a worker whose coordinator is gone) while a bot thinks:
    the bot would read ``shutdown`` only after its answer, so it is not sent one nor
    waited for (the wait, scaled by the host's load, kept a worker's bots alive for
    seconds after its coordinator died); an idle bot is still told to stop."""
    thinker = ScriptedBot("thinker", stall(at=1))
    idle = ScriptedBot("idle")
    settings = MatchSettings(time=TimeControl(move_ms=60_000, reaction_ms=60_000,
                                              startup_ms=2000))
    with trio.move_on_after(5) as scope:
        await play_game([thinker, idle], settings=settings)
    assert scope.cancelled_caught
    assert trio.current_time() - scope.deadline < 0.01  # virtual time: no wait at all
    assert not thinker.of_type(Shutdown)
    assert isinstance(idle.seen[-1], Shutdown)
