"""A contained or sandboxed bot's CPU time read from one counter: the cgroup of its own
that the referee makes in the hierarchy that counts CPU time (referee.shell.limits,
referee.shell.cpucounter), which the bot can neither leave nor reset."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import trio

from referee.core import BotCommand, HardLimits, Sandbox
from referee.shell.cputime import CpuMeter
from referee.shell.limits import PARENT, SWEEP_AGE_S, LimitBackend, limit_backend, probe
from referee.shell.sandbox import WrappedBotProcess, containment
from referee.shell.spawn import open_bot_process

REPO = Path(__file__).resolve().parents[2]
ESCAPE = REPO / "tests" / "hostile_bots" / "cgroup_escape.py"

counted = pytest.mark.skipif(
    not os.path.exists("/proc/self/stat") or not limit_backend().counts_cpu()
    or not containment().contained,
    reason="needs a cgroup backend that counts CPU time, and contained bots")

#: A bot that, while the test reads it, spends CPU in a child it reaps and in an
#: orphan (reparented to the namespace's first process), then sleeps.
FORKS = """
import os, time
def spin(seconds):
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass
if os.fork() == 0:
    spin(0.3); os._exit(0)
os.wait()
if os.fork() == 0:
    if os.fork() == 0:
        spin(0.3); os._exit(0)
    os._exit(0)
os.wait()
time.sleep(60)
"""


def test_an_accounting_cgroup_is_made_for_a_bot_without_limits(tmp_path: Path) -> None:
    roots = tuple(tmp_path / name for name in ("memory", "pids", "cpu"))
    backend = LimitBackend("cgroup v1", roots, tmp_path / "cpuacct")
    assert backend.prepare(HardLimits()) is None  # not asked: nothing made
    handle = backend.prepare(HardLimits(), account=True)
    assert handle is not None and len(handle.dirs) == 1
    assert handle.dirs[0].parent == tmp_path / "cpuacct" / PARENT
    handle.remove()
    assert not handle.dirs[0].exists()
    # Without a CPU counter (v1 without cpuacct, prlimit), nothing for the accounting.
    assert LimitBackend("cgroup v1", roots).prepare(HardLimits(), account=True) is None
    assert LimitBackend("prlimit").prepare(HardLimits(), account=True) is None
    v2 = LimitBackend("cgroup v2", (tmp_path,)).prepare(HardLimits(), account=True)
    assert v2 is not None and v2.dirs[0].parent == tmp_path / PARENT


def test_cpu_and_cpuacct_mounted_together_make_one_cgroup(tmp_path: Path) -> None:
    both = tmp_path / "cpu,cpuacct"
    both.mkdir()
    (tmp_path / "cpu").symlink_to(both)
    roots = tuple(tmp_path / name for name in ("memory", "pids", "cpu"))
    handle = LimitBackend("cgroup v1", roots, both).prepare(
        HardLimits(cpu_percent=50), account=True)
    assert handle is not None and len(handle.dirs) == 1
    handle.remove()


def test_the_next_start_sweeps_the_accounting_cgroups_left_behind(tmp_path: Path) -> None:
    for name in ("memory", "pids", "cpu", "cpuacct"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cgroup.procs").touch()
    (tmp_path / "cpuacct" / "cpuacct.usage").touch()
    stale = tmp_path / "cpuacct" / PARENT / "2147483646-0"  # a referee that is gone
    stale.mkdir(parents=True)
    old = time.time() - 2 * SWEEP_AGE_S
    os.utime(stale, (old, old))
    backend = probe(tmp_path, env=lambda _: None)
    assert backend.accounting == tmp_path / "cpuacct"
    assert not stale.exists()


async def _charged(command: BotCommand) -> tuple[float, CpuMeter]:
    async with open_bot_process(command) as bot:
        assert isinstance(bot, WrappedBotProcess)
        meter = CpuMeter(bot.pid, wrapped=True)
        before = meter.quick()
        deadline = time.monotonic() + 30
        while meter.quick().since(before) < 500 and time.monotonic() < deadline:
            await trio.sleep(0.05)
        used = meter.quick()
        meter.close()
        return used.since(before), meter


@counted
@pytest.mark.parametrize("sandboxed", [False, True], ids=["contained", "sandboxed"])
def test_one_counter_holds_reaped_children_and_orphans(sandboxed: bool) -> None:
    command = BotCommand((sys.executable, "-c", FORKS),
                         sandbox=Sandbox() if sandboxed else None)
    used, meter = trio.run(_charged, command)
    assert meter.cgroup_dirs, "the bot has a cgroup that counts its CPU time"
    assert used >= 500  # the reaped child's 0.3 s and the orphan's 0.3 s


async def _escape(command: BotCommand, log: Path) -> tuple[str, str]:
    async with open_bot_process(command, stderr_path=log) as bot:
        deadline = time.monotonic() + 30
        while "cgroup_escape:" not in log.read_text() and time.monotonic() < deadline:
            await trio.sleep(0.05)
        meter = CpuMeter(bot.pid, wrapped=True)
        with open(f"/proc/{meter.root}/cgroup") as f:
            return log.read_text(), f.read()


@counted
@pytest.mark.parametrize("sandboxed", [False, True], ids=["contained", "sandboxed"])
def test_a_bot_cannot_leave_or_reset_its_cgroup(sandboxed: bool, tmp_path: Path) -> None:
    command = BotCommand((sys.executable, str(ESCAPE)),
                         sandbox=Sandbox() if sandboxed else None)
    told, cgroups = trio.run(_escape, command, tmp_path / "bot.log")
    assert "cgroup_escape: refused" in told, told
    own = [line for line in cgroups.splitlines() if f"/{PARENT}/" in line]
    assert own and any("cpuacct" in line or line.startswith("0::") for line in own), cgroups
