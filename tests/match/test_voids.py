"""Timeouts the machine caused void the game; timeouts a bot caused never do
(referee.core.fairness, referee.match.unit), and the CPU time basis."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import trio
from processes import busy_machine, live_children

from referee.core.clock import TimeBasis, TimeControl
from referee.core.fairness import Blame
from referee.core.schedule import match_games
from referee.core.specs import BotCommand, BotSpec
from referee.match.game import GameOutcome, MatchSettings
from referee.match.unit import play_unit

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "hostile_bots"
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
CPUS = os.cpu_count() or 1

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"),
                                reason="needs /proc with the scheduler's statistics")


def hostile(script: str, *args: str, name: str = "hostile") -> BotSpec:
    return BotSpec(name, BotCommand((sys.executable, str(HOSTILE / f"{script}.py"), *args)))


RANDOM = BotSpec("random", BotCommand((sys.executable, str(RANDOM_BOT), "1")))


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    yield
    assert live_children(zombies=True) == [], "the test left processes behind"


async def play(bots: Sequence[BotSpec], tmp_path: Path, time: TimeControl,
               **settings: object) -> list[GameOutcome]:
    config = MatchSettings(time=time, log_dir=tmp_path / "logs", **settings)  # type: ignore[arg-type]
    with trio.fail_after(90):
        return await play_unit(match_games([b.name for b in bots], 1, 1), bots, config)


@pytest.mark.slow
async def test_a_starved_bot_gets_its_game_voided_and_played_again(tmp_path: Path) -> None:
    """An honest bot that the machine starves of CPU until its wait's cap (here the
    deadline itself: starved_cap 1) times out: the game is voided and played again by
    fresh processes, at most void_replays times; past that it is stored as voided,
    without a result (never a loss)."""
    time = TimeControl(move_ms=100, reaction_ms=100, startup_ms=30_000, time_basis=TimeBasis.WALL)
    with busy_machine(8 * CPUS):
        [outcome] = await play([hostile("spinner", "80"), RANDOM], tmp_path, time,
                               void_replays=1, starved_cap=1)
    assert outcome.voided, ([s.forfeit for s in outcome.seats], outcome.infra)
    assert outcome.seats == ()
    assert [e.attempt for e in outcome.infra] == [0, 1]
    for event in outcome.infra:
        assert event.bot == "hostile"
        assert event.blame is Blame.STARVED
        figures = event.figures
        assert figures.cpu_ms is not None and figures.run_delay_ms is not None
        late = figures.answer_late_ms
        if late is not None and figures.run_delay_ms > late:
            continue  # it answered late by less than it waited for a CPU: starved too
        assert figures.cpu_ms < 0.5 * figures.window_ms
        assert figures.runnable or figures.cpu_ms + figures.run_delay_ms >= (
            0.5 * figures.window_ms)
    # Fresh processes: each play started the bots again.
    logs = sorted(p.name for p in (tmp_path / "logs").iterdir() if "hostile" in p.name)
    assert len(logs) == 2


@pytest.mark.slow
async def test_a_bot_that_lowers_its_own_priority_buys_no_void(tmp_path: Path) -> None:
    """A bot that yields the CPU to everyone (nice 19) and times out chose to."""
    time = TimeControl(move_ms=100, reaction_ms=100, startup_ms=30_000, time_basis=TimeBasis.WALL)
    with busy_machine(2 * CPUS):
        [outcome] = await play([hostile("spinner", "80", "nice"), RANDOM], tmp_path, time)
    assert outcome.infra == ()
    forfeit = {s.bot: s.forfeit for s in outcome.seats}["hostile"]
    assert forfeit is not None and forfeit.reason == "timeout"


@pytest.mark.slow
async def test_a_bot_that_forks_busy_loops_buys_no_void(tmp_path: Path) -> None:
    """A losing bot that overloads the machine with its own busy children times out and
    forfeits: their CPU time is its own."""
    time = TimeControl(move_ms=300, reaction_ms=300, startup_ms=30_000, time_basis=TimeBasis.WALL)
    [outcome] = await play([hostile("fork_busy"), RANDOM], tmp_path, time)
    assert not outcome.voided, [e.figures for e in outcome.infra]
    assert outcome.infra == ()
    seats = {s.bot: s for s in outcome.seats}
    assert seats["hostile"].forfeit is not None
    assert seats["hostile"].forfeit.reason == "timeout"
    # Its timed-out answer counts in its time use, at its allowance, as a near miss.
    assert seats["hostile"].time.times_ms[-1] == 300.0
    assert seats["hostile"].time.near_misses >= 1


async def test_a_sleeping_bot_under_the_cpu_basis_times_out_at_the_wall_cap(
    tmp_path: Path,
) -> None:
    """Under the CPU basis a bot that sleeps uses no CPU time, yet it cannot wait
    forever: past ten times its deadline in wall time it times out (and is not starved:
    sleeping is not waiting for a CPU)."""
    time = TimeControl(move_ms=50, reaction_ms=50, startup_ms=30_000, time_basis=TimeBasis.CPU)
    [outcome] = await play([hostile("sleepy", "2000"), RANDOM], tmp_path, time)
    assert outcome.infra == ()
    forfeit = {s.bot: s.forfeit for s in outcome.seats}["hostile"]
    assert forfeit is not None and forfeit.reason == "timeout"
    assert "of wall time" in forfeit.detail


async def test_the_cpu_basis_charges_cpu_time_not_waiting(tmp_path: Path) -> None:
    """A bot that sleeps three times its limit before each answer stays in time under
    the CPU basis, and its time use is the CPU time it used."""
    time = TimeControl(move_ms=100, reaction_ms=100, startup_ms=30_000, time_basis=TimeBasis.CPU)
    [outcome] = await play([hostile("sleepy", "300"), RANDOM], tmp_path, time)
    seats = {s.bot: s for s in outcome.seats}
    assert seats["hostile"].forfeit is None
    assert seats["hostile"].time.decisions > 0
    assert seats["hostile"].time.max is not None and seats["hostile"].time.max < 100


@pytest.mark.slow
async def test_a_starved_bot_that_overruns_its_cpu_time_forfeits(tmp_path: Path) -> None:
    """Waited for past its wall-time cap because the machine starved it, a bot that
    then uses more CPU time than it has forfeits: the void the starvation would have
    been is not left behind."""
    time = TimeControl(move_ms=50, reaction_ms=50, startup_ms=30_000, time_basis=TimeBasis.CPU)
    with busy_machine(8 * CPUS):
        [outcome] = await play([hostile("spinner", "300"), RANDOM], tmp_path, time)
    assert outcome.infra == ()
    forfeit = {s.bot: s.forfeit for s in outcome.seats}["hostile"]
    assert forfeit is not None and forfeit.reason == "timeout"
    assert "of CPU time" in forfeit.detail  # over its limit, or all of it used at the cap


async def test_the_cpu_basis_catches_a_bot_that_overruns_its_cpu_time(tmp_path: Path) -> None:
    time = TimeControl(move_ms=50, reaction_ms=50, startup_ms=30_000, time_basis=TimeBasis.CPU)
    [outcome] = await play([hostile("spinner", "300"), RANDOM], tmp_path, time)
    forfeit = {s.bot: s.forfeit for s in outcome.seats}["hostile"]
    assert forfeit is not None and forfeit.reason == "timeout"
    assert outcome.infra == ()
