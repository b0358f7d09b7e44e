"""check catches the bugs that pass a naive compliance run and lose games in play: each
mutant in tests/hostile_bots/mutant_*.py plays correctly but for one mistake, and check,
with its default time control, fails it on the scenario made for that mistake."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from taki_protocol import React

from referee.compliance.outcome import BotReport
from referee.compliance.run import CheckSettings, check_bot
from referee.config.bot_commands import parse_bot_arg
from referee.core.clock import TimeControl

HOSTILE = Path(__file__).resolve().parents[2] / "tests" / "hostile_bots"
UNDECLARED = 'ended its turn with one card without declaring "last card" and drew the penalty'


async def check(command: str, tmp_path: Path, only: set[str] = frozenset()) -> BotReport:
    settings = CheckSettings(time=TimeControl(), log_dir=tmp_path, only=frozenset(only))
    with trio.fail_after(180):
        return await check_bot(parse_bot_arg(command, 0), settings)


@pytest.mark.slow
@pytest.mark.parametrize(("figure", "scenario"), [
    ("stop", "last-card-stop-two-players"),
    ("change_direction", "last-card-change-direction-two-players"),
    ("king", "last-card-pyramid-king"),
])
async def test_a_missing_declaration_fails_its_scenario(figure: str, scenario: str,
                                                         tmp_path: Path) -> None:
    report = await check(f"python {HOSTILE / 'mutant_declares.py'} {figure}", tmp_path)
    failed = {o.name: o for o in report.failures}
    assert scenario in failed, [o.name for o in report.failures]
    assert failed[scenario].problem == UNDECLARED
    assert all(o.problem == UNDECLARED for o in report.failures)
    assert all(o.passed for o in report.outcomes if o.group == "lifecycle")


@pytest.mark.slow
async def test_a_reaction_budgeted_from_the_bank_fails(tmp_path: Path) -> None:
    report = await check(f"python {HOSTILE / 'mutant_bank_react.py'}", tmp_path)
    assert [o.name for o in report.failures] == ["bank-react"]
    [outcome] = report.failures
    assert isinstance(outcome.request, React)
    assert outcome.request.time_left_ms is not None and outcome.request.time_left_ms > 50_000
    assert outcome.request.deadline_ms == TimeControl().reaction_ms
    assert outcome.problem == (f"forfeited (timeout): allowed deadline_ms"
                               f" {TimeControl().reaction_ms} ms plus"
                               f" {TimeControl().grace_ms} ms of grace")


async def test_a_bot_that_counts_request_ids_fails(tmp_path: Path) -> None:
    report = await check(f"python {HOSTILE / 'mutant_consecutive_ids.py'}", tmp_path,
                         only={"decide-plus"})
    [outcome] = report.outcomes
    assert outcome.problem == "forfeited (crash)"
    assert "expected request" in outcome.stderr


async def test_a_second_answer_is_named_as_such(tmp_path: Path) -> None:
    report = await check(f"python {HOSTILE / 'extra_answer.py'} 1", tmp_path,
                         only={"decide-plus"})
    [outcome] = report.outcomes
    assert outcome.fault is not None and outcome.fault.reason == "protocol"
    detail = outcome.fault.public_detail
    assert detail.startswith("a second answer for request ")
    assert "each request takes exactly one answer" in detail
    assert "sent before" not in detail
