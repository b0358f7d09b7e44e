"""A bot cannot make the referee, which answers its sysinfo() calls by writing into its
memory as root (referee/shell/sysinfo_notify.py), write anywhere the kernel's own call
would not, and no call waits for an answer that will not come: hostile pointers
(tests/hostile_bots/sysinfo_pointers.py), a notification the referee finds dead, a
kernel that knows the liveness check by its older number."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.core import BotCommand, ResourceLimits, Sandbox
from referee.shell import sysinfo_notify
from referee.shell.spawn import open_bot_process
from referee.shell.sysinfo_notify import PROCS

HOSTILE = Path(__file__).resolve().parents[1] / "hostile_bots"
POINTERS = HOSTILE / "sysinfo_pointers.py"
PROBE = HOSTILE / "sysinfo_probe.py"
MIB = 1 << 20

pytestmark = pytest.mark.slow


def run(*argv: str, sandboxed: bool = True) -> dict[str, Any]:
    """What the bot ``argv`` prints: one JSON line."""
    command = BotCommand((sys.executable, *argv),
                         sandbox=Sandbox() if sandboxed else None,
                         limits=ResourceLimits(memory_mb=256, pids=64))

    async def output() -> dict[str, Any]:
        async with open_bot_process(command) as process:
            data = b""
            while chunk := await process.receive_some(1 << 16,
                                                      deadline=trio.current_time() + 60):
                data += chunk
            assert data, process.stderr_tail()
            seen: dict[str, Any] = json.loads(data)
            return seen

    return trio.run(output)


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "contained"])
def test_the_referee_writes_only_where_the_callers_own_call_would(sandboxed: bool) -> None:
    # The bot's own script: a file it may read, not write (root's, when root runs this).
    before = POINTERS.read_bytes()
    seen = run(str(POINTERS), str(POINTERS), sandboxed=sandboxed)
    # A read-only shared mapping of a file: the file is never written through it.
    assert seen["shared_file"] == errno.EFAULT, seen
    assert seen["file_same"] and POINTERS.read_bytes() == before, seen
    # A read-only private mapping is the caller's own copy: written (as ptrace writes
    # it) or refused as the kernel's call refuses it; the file stays as it was either way.
    assert seen["private_file"] in (0, errno.EFAULT), seen
    # A buffer that runs into an unmapped page, or past the last user address.
    assert seen["straddle"] == errno.EFAULT, seen
    assert seen["top"] in (errno.EFAULT, -1), seen  # -1: the page was not to be had
    # int 0x80 reads the pointer's lower 32 bits only: so does the referee.
    high = seen["high_bits"]
    assert high["result"] is None or (high["result"] == 0 and high["low"]
                                      and not high["high"]), seen
    assert seen["undumpable"] == 0, seen  # undumpable: root still writes its memory


def _samples_with(monkeypatch: pytest.MonkeyPatch, name: str, value: object
                  ) -> dict[str, Any]:
    monkeypatch.setattr(sysinfo_notify, name, value)
    return run(str(PROBE), "0", sandboxed=False)


def test_a_call_the_referee_finds_dead_is_still_answered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Every notification gets an answer: one left unanswered would hold its caller
    # for as long as the bot lives (here, the probe would never print).
    seen = _samples_with(monkeypatch, "_alive", lambda *_: False)
    assert not seen["samples"] and set(seen["errors"]) == {errno.ENOSYS}, seen


def test_a_kernel_that_knows_the_liveness_check_by_its_older_number(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Linux 5.0-5.6 know SECCOMP_IOCTL_NOTIF_ID_VALID only as _IOR: a number the
    # kernel does not know stands for the newer one here.
    seen = _samples_with(monkeypatch, "_IOCTL_ID_VALID", 0x40082163)
    assert not seen["errors"], seen
    assert all(sample[:7] == [256 * MIB, 256 * MIB, 0, 0, 0, 0, PROCS]
               for sample in seen["samples"]), seen


#: Starts 20 threads that call sysinfo() without end (past the burst: most calls wait
#: for their turn), then replaces itself by the probe while they wait.
EXEC_MID_CALL = """
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None)
def flood():
    buffer = ctypes.create_string_buffer(128)
    while True:
        libc.sysinfo(buffer)
for _ in range(20):
    threading.Thread(target=flood, daemon=True).start()
time.sleep(0.5)
os.execv(sys.executable, [sys.executable, sys.argv[1], "0"])
"""
#: Runs the probe as a child in a session of its own, and passes on what it prints.
CHILD = """
import subprocess, sys
sys.stdout.write(subprocess.run([sys.executable, sys.argv[1], "0"], stdout=subprocess.PIPE,
                                start_new_session=True, check=True, text=True).stdout)
"""


@pytest.mark.parametrize("code", [EXEC_MID_CALL, CHILD], ids=["exec-mid-call", "child"])
@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "contained"])
def test_what_a_bot_starts_or_becomes_keeps_the_fixed_figures(code: str,
                                                              sandboxed: bool) -> None:
    seen = run("-c", code, str(PROBE), sandboxed=sandboxed)
    assert not seen["errors"] and seen["samples"], seen
    assert all(sample[:7] == [256 * MIB, 256 * MIB, 0, 0, 0, 0, PROCS]
               for sample in seen["samples"]), seen


def _task_names() -> list[str]:
    names, todo = [], [trio.lowlevel.current_root_task()]
    while todo:
        task = todo.pop()
        names.append(task.name)
        todo += [child for nursery in task.child_nurseries for child in nursery.child_tasks]
    return names


def test_nothing_of_a_bots_sysinfo_outlives_it() -> None:
    # Bots that call sysinfo and exit, and bots closed while their threads wait for an
    # answer: the referee's descriptors and tasks are back to what they were.
    flood = EXEC_MID_CALL.replace("os.execv", "print('up', flush=True); time.sleep(60); #")

    async def bots() -> tuple[int, int, list[str]]:
        await open_and_close(BotCommand((sys.executable, str(PROBE), "0")))  # warm up
        before = len(os.listdir("/proc/self/fd"))
        for index in range(12):
            code = (str(PROBE), "0") if index % 2 else ("-c", flood, str(PROBE))
            await open_and_close(BotCommand((sys.executable, *code),
                                            sandbox=Sandbox() if index % 4 < 2 else None))
        await trio.sleep(0.5)  # answers abandoned at the close finish
        return before, len(os.listdir("/proc/self/fd")), _task_names()

    before, after, names = trio.run(bots)
    assert after == before
    assert not [name for name in names if name.endswith(" sysinfo")], names  # serve()


async def open_and_close(command: BotCommand) -> None:
    """Start the bot, read its first line, close it."""
    async with open_bot_process(command) as process:
        assert await process.receive_some(1 << 16, deadline=trio.current_time() + 60)


def test_the_listener_is_closed_when_the_bots_services_fail_to_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.shell.process import BotProcess

    async def start() -> tuple[int, int]:
        await open_and_close(BotCommand((sys.executable, str(PROBE), "0")))  # warm up
        before = len(os.listdir("/proc/self/fd"))

        def fail(*_args: object) -> None:
            raise RuntimeError("services")
        monkeypatch.setattr(BotProcess, "start_services", fail)
        with pytest.raises(RuntimeError):
            await open_and_close(BotCommand((sys.executable, str(PROBE), "0")))
        return before, len(os.listdir("/proc/self/fd"))

    before, after = trio.run(start)
    assert after == before
