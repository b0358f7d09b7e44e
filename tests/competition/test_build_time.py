"""A build's time limit is of its own time (referee.shell.owntime): the time the machine
keeps it off the CPU (it runs 10 nice levels below the server, beside other users' jobs)
does not count, a build that sleeps or computes past its limit is still stopped, within
its cap, and the message names the allowance. Real builds in the sandbox beside real
busy loops (slow)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from processes import busy_machine, live_children

from referee.competition.build import BUILD_WALL_CAP, run_build
from referee.competition.config import SandboxSection

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"),
                                 reason="needs /proc with the scheduler's statistics")]

CPUS = os.cpu_count() or 1
#: A build that needs MS of CPU time, and one that sleeps.
SPENDS = "python3 -c 'import time\nwhile time.process_time() < {s}: pass'"
SLEEPS = "sleep 60"
STOPPED = re.compile(r"build: stopped after 2 s of its own time: (\d+) s of wall time less"
                     r" (\d+) s the machine kept it off the CPU, (\d+) s of CPU time on"
                     rf" {CPUS} CPUs \(at most {2 * BUILD_WALL_CAP} s of wall time\)")


async def build(tmp_path: Path, command: str, seconds: int = 2) -> tuple[bool, str]:
    source = tmp_path / "source"
    source.mkdir(exist_ok=True)
    (source / "bot.toml").write_text('name = "b"\ncommand = "./bot"\n')
    box = SandboxSection(build_seconds=seconds, build_disk_mb=16, build_pids=32,
                         build_memory_mb=256)
    with trio.fail_after(120):
        result = await run_build(source, command, box, tmp_path / "bot.tar", max_bytes=1 << 24)
    return result.ok, result.output


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    yield
    assert live_children(zombies=True) == [], "the test left processes behind"


async def test_a_build_the_machine_starves_is_not_stopped_for_the_machines_delay(
        tmp_path: Path) -> None:
    """0.1 s of CPU time at nice 10 beside two busy loops per CPU takes several times its
    4 s limit of wall time: it waits for a CPU meanwhile, and passes. (The limit leaves
    room for what the build's start costs beside the busy loops, which is no wait for
    a CPU: the sandbox's set-up and the interpreter's files read from a busy disk.)"""
    with busy_machine(2 * CPUS):
        ok, output = await build(tmp_path, SPENDS.format(s=0.1), seconds=4)
    assert ok, output


async def test_a_sleeping_build_is_stopped_at_its_limit_naming_its_allowance(
        tmp_path: Path) -> None:
    with busy_machine(2 * CPUS):
        ok, output = await build(tmp_path, SLEEPS)
    assert not ok
    stopped = STOPPED.search(output)
    assert stopped is not None, output
    assert int(stopped[1]) < 2 * BUILD_WALL_CAP  # a sleep waits for no CPU


async def test_a_build_that_computes_past_its_limit_is_stopped(tmp_path: Path) -> None:
    ok, output = await build(tmp_path, SPENDS.format(s=60))
    assert not ok
    assert STOPPED.search(output) is not None, output
