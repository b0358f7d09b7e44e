"""The guard that kills a bot's process group when the referee dies without cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
import trio
from processes import gone

from referee.guard import GroupGuard

# A bot that ignores the end of its input and keeps a child of its own: only a kill
# stops either of them.
STUBBORN_BOT = """
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = os.fork()
if child == 0:
    time.sleep(600)
    os._exit(0)
print(os.getpid(), child, flush=True)
time.sleep(600)
"""

# A referee in miniature: starts the bot, reports the pids of the bot, its child and its
# guard, then waits to be killed.
REFEREE = f"""
import sys, trio
from referee.process import BotCommand, open_bot_process

async def main():
    async with open_bot_process(BotCommand((sys.executable, "-c", {STUBBORN_BOT!r}))) as bot:
        line = b""
        while not line.endswith(b"\\n"):
            line += await bot.receive_some()
        print(line.decode().strip(), bot._guard.pid, flush=True)
        await trio.sleep(600)

trio.run(main)
"""


def wait_until(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_a_killed_referee_takes_its_bots_with_it() -> None:
    referee = subprocess.Popen(
        [sys.executable, "-c", REFEREE], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    pids: list[int] = []
    try:
        assert referee.stdout is not None
        pids = [int(pid) for pid in referee.stdout.readline().split()]
        if len(pids) != 3:
            referee.kill()
            _, err = referee.communicate()
            pytest.fail(f"the referee did not start its bot:\n{err.decode(errors='replace')}")
        bot, child, guard = pids
        assert not any(gone(pid) for pid in pids)
        referee.kill()
        referee.wait()
        # The bot's input is closed now, which it ignores: only the guard stops it.
        assert wait_until(lambda: gone(bot) and gone(child), 10), "the bot outlived the referee"
        assert wait_until(lambda: gone(guard), 5)
    finally:
        for pid in pids:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)
        if referee.poll() is None:
            referee.kill()
            referee.wait()


@pytest.fixture
def group() -> Iterator[subprocess.Popen[bytes]]:
    """A process in a group of its own, as a bot runs; killed after the test."""
    process = subprocess.Popen(["sleep", "600"], start_new_session=True)
    yield process
    if process.poll() is None:
        process.kill()
    process.wait()


async def test_a_disarmed_guard_leaves_the_group_alone(group: subprocess.Popen[bytes]) -> None:
    guard = await GroupGuard.start(group.pid)
    assert guard is not None and guard.pgid == group.pid
    await guard.close()
    assert gone(guard.pid)
    assert group.poll() is None  # still running: the guard was told it is not needed


async def test_a_guard_whose_pipe_closes_kills_the_group(group: subprocess.Popen[bytes]) -> None:
    guard = await GroupGuard.start(group.pid)
    assert guard is not None
    # What the kernel does when the referee dies: the write end closes, no disarm.
    process = guard._process
    assert process.stdin is not None
    await process.stdin.aclose()
    with trio.fail_after(5):
        await process.wait()
    assert wait_until(lambda: group.poll() is not None, 5)
    assert group.returncode == -signal.SIGKILL
