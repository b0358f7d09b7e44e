"""check_bot against real bot processes: sample bots pass, and each kind of misbehaviour
fails the scenarios it should, with the request sent and what the bot did."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import trio
from processes import live_children
from taki_protocol import Decide, React

from referee.compliance.outcome import BotReport
from referee.compliance.run import LIFECYCLE, CheckSettings, check_bot, scenario_catalogue
from referee.config.bot_commands import parse_bot_arg
from referee.core.clock import TimeControl

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "hostile_bots"
#: Generous limits: these tests check the conversation, not the speed of a loaded machine.
ROOMY = TimeControl(move_ms=5000, reaction_ms=5000, startup_ms=20_000)
REACT_SCENARIOS = {"react-holder", "react-non-holder", "react-own-plus3-pending",
                   "last-card-breaker", "react-ten-players"}


async def check(command: str, *, only: set[str] = frozenset(), time: TimeControl = ROOMY,
                tmp_path: Path, slack: float = 1.0) -> BotReport:
    settings = CheckSettings(time=time, log_dir=tmp_path / "logs", only=frozenset(only),
                             slack=slack)
    with trio.fail_after(120):
        report = await check_bot(parse_bot_arg(command, 0), settings)
    assert not live_children(zombies=False)
    return report


@pytest.mark.slow
@pytest.mark.parametrize("bot", ["random_bot.py 5", "greedy_bot.py"])
async def test_sample_python_bot_passes_every_scenario(bot: str, tmp_path: Path) -> None:
    report = await check(f"python {REPO / 'sample_bots' / bot}", tmp_path=tmp_path)
    assert [o.name for o in report.outcomes] == [n for n, _, _ in scenario_catalogue()]
    assert report.passed, [(o.name, o.problem, o.what_the_bot_did()) for o in report.failures]
    assert report.to_json()["failed"] == 0


@pytest.mark.slow
async def test_react_out_of_range_fails_the_react_scenarios(tmp_path: Path) -> None:
    report = await check(f"python {HOSTILE / 'react_out_of_range.py'}", tmp_path=tmp_path)
    failed = {o.name: o for o in report.failures}
    assert set(failed) >= REACT_SCENARIOS
    for name in REACT_SCENARIOS:
        outcome = failed[name]
        assert outcome.problem == "forfeited (illegal)"
        assert isinstance(outcome.request, React)
        assert outcome.answer is not None
        assert outcome.answer.choice == len(outcome.request.legal)
        assert outcome.fault is not None and outcome.fault.reason == "illegal"
    # Every failure is a react answered out of range; the decisions were all fine.
    assert all(isinstance(o.request, React) for o in report.failures)
    assert all(o.passed for o in report.outcomes if o.group == "lifecycle")


@pytest.mark.slow
async def test_silent_bot_times_out_and_the_run_ends(tmp_path: Path) -> None:
    only = {"handshake", "shutdown-mid-game", "decide-play", "react-holder", "big-hand-draw"}
    fast = TimeControl(move_ms=100, reaction_ms=100, startup_ms=20_000)
    report = await check(f"python {HOSTILE / 'sleep_forever.py'} 0", only=only, time=fast,
                         tmp_path=tmp_path)
    outcomes = {o.name: o for o in report.outcomes}
    assert set(outcomes) == only
    assert outcomes["handshake"].passed
    for name in only - {"handshake"}:
        outcome = outcomes[name]
        assert outcome.fault is not None and outcome.fault.reason == "timeout", name
        assert outcome.answer is None
        assert "forfeited (timeout)" in (outcome.problem or "")
    assert isinstance(outcomes["react-holder"].request, React)
    assert isinstance(outcomes["decide-play"].request, Decide)


async def test_never_declaring_bot_fails_the_last_card_scenarios(tmp_path: Path) -> None:
    only = {"last-card-two-cards", "last-card-crazy-hand", "last-card-pyramid-stage-1",
            "last-card-plus", "last-card-crazy-last", "last-card-crazy-forfeited"}
    report = await check(f"python {HOSTILE / 'never_declares.py'}", only=only,
                         tmp_path=tmp_path)
    assert {o.name for o in report.failures} == only
    for outcome in report.failures:
        assert "without declaring" in (outcome.problem or "")
        assert outcome.answer is not None and outcome.answer.last_card is False
        assert isinstance(outcome.request, Decide)


async def test_a_naive_declarer_fails_the_pyramid_break_and_the_forfeited_seat(
        tmp_path: Path) -> None:
    """Declaring from the hand's size alone misses the card that Pyramid stage 1 deals
    after a break, and counts the hand of a forfeited seat that a Crazy Card skips."""
    only = {"last-card-two-cards", "last-card-breaker", "last-card-pyramid-break",
            "last-card-crazy-hand", "last-card-crazy-forfeited"}
    report = await check(f"python {HOSTILE / 'naive_declarer.py'}", only=only,
                         tmp_path=tmp_path)
    failed = {o.name: o for o in report.failures}
    assert set(failed) == {"last-card-pyramid-break", "last-card-crazy-forfeited"}
    assert isinstance(failed["last-card-pyramid-break"].request, React)
    assert isinstance(failed["last-card-crazy-forfeited"].request, Decide)
    for outcome in failed.values():
        assert "without declaring" in (outcome.problem or "")
        assert outcome.answer is not None and outcome.answer.last_card is False


async def test_deadline_zero_is_an_empty_bank_and_fails_a_bot_that_waits(
        tmp_path: Path) -> None:
    waits = await check(f"python {HOSTILE / 'zero_means_no_limit.py'}",
                        only={"deadline-zero", "decide-play"}, tmp_path=tmp_path)
    outcomes = {o.name: o for o in waits.outcomes}
    assert outcomes["decide-play"].passed
    zero = outcomes["deadline-zero"]
    assert zero.problem == "forfeited (timeout): allowed deadline_ms 0 ms plus 100 ms of grace"
    assert isinstance(zero.request, Decide)
    assert zero.request.deadline_ms == 0 and zero.request.time_left_ms == 0
    # It sleeps, using no CPU time: it is ended at the CPU basis's wall-time cap, which
    # the detail names with the empty bank's grace.
    assert zero.fault is not None
    assert zero.fault.public_detail.startswith("no answer within")
    assert "(the cap: 10 times 0 ms + 100 ms grace; it used" in zero.fault.public_detail


async def test_writing_after_game_over_fails(tmp_path: Path) -> None:
    report = await check(f"python {HOSTILE / 'after_game_over.py'}",
                         only={"decide-change-color"}, tmp_path=tmp_path)
    [outcome] = report.outcomes
    assert re.fullmatch(r"after game_over: answer for request \d+, but no request is open",
                        outcome.problem or "")
    assert outcome.fault is not None and outcome.fault.reason == "protocol"


@pytest.mark.slow
async def test_a_bot_that_never_exits_fails_every_goodbye(tmp_path: Path) -> None:
    report = await check(f"python {HOSTILE / 'lingers.py'}", only=set(LIFECYCLE),
                         tmp_path=tmp_path)
    failed = {o.name: o.problem for o in report.failures}
    assert set(failed) == set(LIFECYCLE) - {"handshake"}
    # The waits are the base ones, longer on a loaded machine (the host's load per CPU).
    assert waited(failed["error-mid-game"], "after error: killed") >= 200
    assert waited(failed["end-of-input"], "after the end of its input") >= 500
    assert waited(failed["shutdown-mid-game"], "after shutdown") >= 500


def waited(problem: str | None, after: str) -> int:
    """The wait in a problem of the form ``still running N ms AFTER``."""
    advice = "; exit at once, without clean-up (PROTOCOL.md section 3.6)"
    found = re.fullmatch(rf"still running (\d+) ms {after}{re.escape(advice)}", problem or "")
    assert found is not None, problem
    return int(found[1])


@pytest.mark.slow
async def test_the_slack_multiplies_the_fixed_waits(tmp_path: Path) -> None:
    """``check --slack 3``: a bot's exit is waited for three times as long."""
    report = await check(f"python {HOSTILE / 'lingers.py'}", only={"end-of-input"},
                         tmp_path=tmp_path, slack=3.0)
    [outcome] = report.failures
    assert waited(outcome.problem, "after the end of its input") >= 1500


async def test_a_bot_that_exits_at_its_first_request_fails_each_scenario(
        tmp_path: Path) -> None:
    only = {"decide-play", "react-holder", "players-2"}
    report = await check(f"python {HOSTILE / 'exit_mid_game.py'} 0", only=only,
                         tmp_path=tmp_path)
    assert {o.name for o in report.failures} == only
    for outcome in report.failures:
        assert outcome.problem == "forfeited (crash)"
        assert outcome.fault is not None
        assert outcome.fault.public_detail == "closed its output: the bot exited with status 2"


async def test_a_failed_handshake_is_shown_and_nothing_else_plays(tmp_path: Path) -> None:
    slow_start = TimeControl(startup_ms=300)
    report = await check("python -c 'import time; time.sleep(30)'", only={"decide-play"},
                         time=slow_start, tmp_path=tmp_path)
    handshake, game = report.outcomes
    assert handshake.name == "handshake" and handshake.problem == "failed (timeout)"
    assert handshake.fault is not None
    # The allowance it applied: the wait less the time the machine kept the bot off the
    # CPU (a sleeping bot was kept off it for none of its wait), and its CPU time.
    assert handshake.fault.public_detail.startswith(
        "no hello within the startup time of 300 ms: waited ")
    assert "ms the machine kept the bot off the CPU" in handshake.fault.public_detail
    assert game.problem == "not played: the bot failed its handshake"
    assert not report.passed


async def test_a_failed_handshake_counts_every_scenario(tmp_path: Path) -> None:
    report = await check("python -c 'import sys; sys.exit(3)'", tmp_path=tmp_path)
    assert [o.name for o in report.outcomes] == [n for n, _, _ in scenario_catalogue()]
    assert all(o.problem == "not played: the bot failed its handshake"
               for o in report.outcomes[1:])
    assert report.outcomes[0].problem == "failed (crash)"


async def test_a_later_process_that_fails_its_handshake_names_the_time_it_was_allowed(
        tmp_path: Path) -> None:
    """The first process answers hello; the next, started for the game scenarios, does
    not: each scenario not played says the startup time the check allowed."""
    script = tmp_path / "bot.sh"
    script.write_text(f'if [ -e "{tmp_path}/started" ]; then sleep 30; fi\n'
                      f'touch "{tmp_path}/started"\n'
                      f'exec {sys.executable} {REPO / "sample_bots" / "random_bot.py"}\n')
    report = await check(f"sh {script}", only={"decide-play"},
                         time=TimeControl(startup_ms=3000), tmp_path=tmp_path)
    (game,) = report.outcomes  # the first handshake passed (not asked for: not listed)
    assert game.problem.startswith("not played: the bot failed its handshake (timeout: no"
                                   " hello within the startup time of 3000 ms: waited ")
    assert game.problem.endswith(" ms of CPU time)")
