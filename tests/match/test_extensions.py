"""A wait whose bot the machine starves is extended, not ended (referee.core.fairness,
referee.shell.waits): under the wall basis, at a bot's start, and never for a bot that
buys it; and a game that ended is never voided."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import trio
from processes import busy_machine, live_children
from taki_protocol import GameOver, Message

from referee.core.clock import TimeBasis, TimeControl
from referee.core.fairness import Blame, WaitFigures, judge
from referee.core.outcomes import GameOutcome, MatchSettings
from referee.core.schedule import match_games
from referee.core.specs import BotCommand, BotSpec
from referee.core.waiting import WaitTimeout
from referee.match.unit import BotOpener, play_unit
from referee.rules import Rules
from referee.shell.bots import BotConnection, open_bot

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "hostile_bots"
RANDOM = BotSpec("random", BotCommand((sys.executable, str(ROOT / "sample_bots" /
                                                           "random_bot.py"), "1")))
CPUS = os.cpu_count() or 1

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"),
                                reason="needs /proc with the scheduler's statistics")


def hostile(script: str, *args: str) -> BotSpec:
    return BotSpec("hostile", BotCommand((sys.executable, str(HOSTILE / f"{script}.py"), *args)))


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    yield
    assert live_children(zombies=True) == [], "the test left processes behind"


async def play(bots: Sequence[BotSpec], tmp_path: Path, time: TimeControl,
               opener: BotOpener = open_bot, **settings: object) -> GameOutcome:
    config = MatchSettings(time=time, log_dir=tmp_path / "logs", rules=Rules(hand_size=3),
                           **settings)  # type: ignore[arg-type]
    with trio.fail_after(120):
        [outcome] = await play_unit(match_games([b.name for b in bots], 1, 1), bots, config,
                                    opener=opener)
    return outcome


# ------------------------------------------------------------------ requests


@pytest.mark.slow
async def test_a_starved_bot_is_waited_for_under_the_wall_basis(tmp_path: Path) -> None:
    """An honest bot that computes half its limit beside eight busy loops per CPU gets
    too little of a CPU to answer in wall time: its wait is extended by the time it was
    kept off the CPU, so it neither times out nor voids the game, and it is charged no
    more than its limit (the time it could think)."""
    time = TimeControl(move_ms=100, reaction_ms=100, startup_ms=30_000, time_basis=TimeBasis.WALL)
    with busy_machine(8 * CPUS):
        outcome = await play([hostile("spinner", "50"), RANDOM], tmp_path, time)
    assert outcome.infra == (), [e.describe() for e in outcome.infra]
    seats = {s.bot: s for s in outcome.seats}
    assert seats["hostile"].forfeit is None
    assert seats["hostile"].time.decisions > 0
    assert seats["hostile"].time.max is not None and seats["hostile"].time.max <= 105


# ------------------------------------------------------------------- start-up


@pytest.mark.slow
@pytest.mark.parametrize("how", ["one", "spread"])
async def test_a_start_starved_up_to_its_cap_voids_the_game(tmp_path: Path, how: str) -> None:
    """With no extension allowed (starved_cap 1), a start the machine starved is an
    infrastructure fault: the game is voided, never forfeited; also a start spread over
    processes, whose waits for a CPU overlap."""
    startup_ms = 300 if how == "one" else 1500  # the processes are forked by then
    time = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=startup_ms,
                       time_basis=TimeBasis.WALL)
    with busy_machine(8 * CPUS):
        outcome = await play([hostile("slow_start", "150" if how == "one" else "1000", how),
                              RANDOM], tmp_path, time, starved_cap=1, void_replays=0)
    assert outcome.voided and outcome.seats == ()
    [event] = outcome.infra
    assert event.blame is Blame.STARVED
    assert event.detail.startswith(f"no hello within the startup time of {startup_ms} ms")


@pytest.mark.slow
async def test_a_start_spread_over_processes_is_waited_for_while_the_machine_starves_it(
        tmp_path: Path) -> None:
    """A start that computes in several processes at once (as a virtual machine's start
    runs many threads) beside eight busy loops per CPU: its processes wait for the CPUs
    together, many times its wait in all, which is no crowding of its own; its start is
    waited for while the machine keeps it off the CPU, and it plays. (Its 300 ms of work
    and its interpreters' starts take up to twice their CPU time beside the busy loops,
    which share the CPUs' caches: its start-up time leaves room for that.)"""
    time = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=1500, time_basis=TimeBasis.WALL)
    with busy_machine(8 * CPUS):
        outcome = await play([hostile("slow_start", "300", "spread"), RANDOM], tmp_path, time)
    assert outcome.infra == (), [e.describe() for e in outcome.infra]
    seats = {s.bot: s for s in outcome.seats}
    assert seats["hostile"].forfeit is None, seats["hostile"].forfeit


@pytest.mark.slow
async def test_a_start_that_computes_past_its_startup_time_is_ended_on_its_cpu_time(
        tmp_path: Path) -> None:
    """Spread over processes on a busy machine, a start that needs more CPU time than
    its startup time forfeits on that CPU time, its allowance named, long before the
    cap: the extensions wait for a starved start, not for one that computes too long."""
    time = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=300, time_basis=TimeBasis.WALL)
    with busy_machine(8 * CPUS):
        outcome = await play([hostile("slow_start", "5000", "spread"), RANDOM], tmp_path, time)
    assert outcome.infra == (), [e.describe() for e in outcome.infra]
    forfeit = {s.bot: s.forfeit for s in outcome.seats}["hostile"]
    assert forfeit is not None and forfeit.reason == "timeout"
    used = re.search(r"it used (\d+) ms of CPU time$", forfeit.detail)
    assert used is not None and int(used[1]) > 300, forfeit.detail


@pytest.mark.slow
async def test_a_sleeping_start_beside_a_busy_machine_gets_no_extension(tmp_path: Path) -> None:
    """A bot that sleeps at its start waits for no CPU: the busy machine buys it nothing,
    it forfeits at its startup time, and the detail says so."""
    time = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=300, time_basis=TimeBasis.WALL)
    sleeper = BotSpec("hostile", BotCommand((sys.executable, "-c",
                                             "import time; time.sleep(60)")))
    with busy_machine(8 * CPUS):
        outcome = await play([sleeper, RANDOM], tmp_path, time)
    forfeit = {s.bot: s.forfeit for s in outcome.seats}["hostile"]
    assert forfeit is not None and forfeit.reason == "timeout"
    waited = re.match(r"no hello within the startup time of 300 ms: waited (\d+) ms, less"
                      r" (\d+) ms the machine kept the bot off the CPU", forfeit.detail)
    assert waited is not None, forfeit.detail
    # Only the interpreter's own start waited for a CPU: its sleep bought nothing.
    assert int(waited[1]) - int(waited[2]) >= 300


@pytest.mark.slow
@pytest.mark.parametrize("how", ["nice", "fork"])
async def test_a_bot_that_starves_its_own_start_buys_nothing(tmp_path: Path, how: str) -> None:
    """A bot that lowers its priority at its start, or forks busy loops that take the
    CPUs from it, is not starved by the machine: no extension, no void, a forfeit."""
    time = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=300, time_basis=TimeBasis.WALL)
    with busy_machine(2 * CPUS if how == "nice" else 0):
        outcome = await play([hostile("slow_start", "400", how), RANDOM], tmp_path, time)
    assert outcome.infra == (), [e.describe() for e in outcome.infra]
    forfeit = {s.bot: s.forfeit for s in outcome.seats}["hostile"]
    assert forfeit is not None and forfeit.reason == "timeout"
    assert forfeit.detail.startswith("no hello within the startup time of 300 ms")


# -------------------------------------------------------------- an ended game

#: A wait the judgement blames on the machine: the bot was runnable, got 2 ms of CPU
#: over 200 ms, on a host whose CPUs were in demand.
STARVED = WaitFigures(window_ms=200.0, wait_ms=300.0, cpu_ms=2.0, run_delay_ms=150.0,
                      runnable=True, cpu_pressure=0.9, load_per_cpu=9.0)


class StarvedAtGameOver(BotConnection):
    """A connection whose bot the machine starves as the game ends: telling it
    ``game_over`` times out, with figures that show the machine's fault."""

    async def send(self, message: Message, timeout_s: float | None = None) -> float:
        if isinstance(message, GameOver):
            raise WaitTimeout("did not read game_over", STARVED)
        return await super().send(message, timeout_s)


async def test_a_game_that_ended_is_never_voided(tmp_path: Path) -> None:
    """An infrastructure fault after the game's end (a starved game_over) leaves its
    result as it is: stored, not voided, and played once."""
    assert judge(STARVED, grace_ms=5) is Blame.STARVED
    time = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=30_000, time_basis=TimeBasis.WALL)
    opener = functools.partial(open_bot, connection=StarvedAtGameOver)
    second = BotSpec("random2", RANDOM.command)
    outcome = await play([RANDOM, second], tmp_path, time, opener=opener)
    assert not outcome.voided
    assert outcome.infra == ()
    assert outcome.reason is not None
    assert sorted(s.place for s in outcome.seats) == [1, 2]
    assert all(s.forfeit is None for s in outcome.seats)
    logs = [p.name for p in (tmp_path / "logs").iterdir()]
    assert len(logs) == 2  # each bot started once: the game was not played again
