"""A busy machine fails no sound bot (PROTOCOL.md section 9): ``check`` with its default
time control (the CPU basis) beside four busy loops per CPU, as other users' jobs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
from processes import busy_machine, live_children

from referee.compliance.run import CheckSettings, check_bot
from referee.config.bot_commands import parse_bot_arg

REPO = Path(__file__).resolve().parents[2]
CPUS = os.cpu_count() or 1

pytestmark = pytest.mark.slow


async def test_an_empty_bank_fails_no_sound_bot_on_a_busy_machine(tmp_path: Path) -> None:
    """``deadline-zero`` leaves the bot its grace alone: a bot that answers at once uses
    a few milliseconds of CPU time, however long the machine keeps it waiting."""
    settings = CheckSettings(log_dir=tmp_path / "logs",
                             only=frozenset({"deadline-zero", "decide-play"}))
    command = f"python {REPO / 'sample_bots' / 'greedy_bot.py'}"
    with busy_machine(4 * CPUS):
        for _ in range(3):
            with trio.fail_after(300):
                report = await check_bot(parse_bot_arg(command, 0), settings)
            assert report.passed, [(o.name, o.problem) for o in report.failures]
    assert not live_children(zombies=False)
