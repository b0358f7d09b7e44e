"""The guard that kills a bot's process group when the referee dies without cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from processes import gone, host_pid, processes_naming

from referee.core.specs import BotCommand
from referee.shell.guard import GroupGuard
from referee.shell.spawn import open_bot_process

# A bot that ignores the end of its input and keeps two children of its own, one of
# which moves to a process group of its own (in the bot's session): only a kill stops
# any of them.
STUBBORN_BOT = """
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
children = []
for leave_group in (False, True):
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        if leave_group:
            os.setpgid(0, 0)
        os.write(ready_w, b"x")
        time.sleep(600)
        os._exit(0)
    os.read(ready_r, 1)
    children.append(child)
print(os.getpid(), *children, flush=True)
time.sleep(600)
"""

# A referee in miniature: starts the bot, reports the pids of the bot, its children (as
# the bot sees them: in its pid namespace when it is contained), its guard and the bot's
# process (bwrap, for a contained bot), then waits to be killed.
REFEREE = f"""
import sys, trio
from referee.core.specs import BotCommand
from referee.shell.spawn import open_bot_process

async def main():
    async with open_bot_process(BotCommand((sys.executable, "-c", {STUBBORN_BOT!r}))) as bot:
        line = b""
        while not line.endswith(b"\\n"):
            line += await bot.receive_some()
        print(line.decode().strip(), bot.guard.pid, bot.pid, flush=True)
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
        said = [int(pid) for pid in referee.stdout.readline().split()]
        if len(said) != 5:
            referee.kill()
            _, err = referee.communicate()
            pytest.fail(f"the referee did not start its bot:\n{err.decode(errors='replace')}")
        session, guard = said[4], said[3]
        bot, child, escapee = (host_pid(pid, session) for pid in said[:3])
        pids = [bot, child, escapee, guard, session]
        assert not any(gone(pid) for pid in pids)
        assert os.getpgid(escapee) == escapee != session == os.getsid(escapee)
        referee.kill()
        referee.wait()
        # The bot's input is closed now, which it ignores: only the guard stops it.
        assert wait_until(lambda: gone(bot) and gone(child), 10), "the bot outlived the referee"
        assert wait_until(lambda: gone(escapee), 10), "a child in another group survived"
        assert wait_until(lambda: gone(guard), 5)
    finally:
        for pid in pids:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)
        if referee.poll() is None:
            referee.kill()
            referee.wait()


# A referee that dies as early as it could: "before-exec" is killed by its bot's process
# between fork and exec, "after-start" kills itself as soon as its bot's exec has
# succeeded. Either way it records the pid of the bot's process first.
HASTY_REFEREE = """
import os, signal, sys, trio
import referee.shell.spawn as rp
from referee.core.specs import BotCommand

when, spawned, started = sys.argv[1:]
make_preexec = rp._make_preexec
open_process = trio.lowlevel.open_process


def make_hasty_preexec(*args, **kwargs):
    before_exec = make_preexec(*args, **kwargs)

    def hasty():
        with open(spawned, "w") as f:
            f.write(str(os.getpid()))
        if when == "before-exec":
            os.kill(os.getppid(), signal.SIGKILL)
        if before_exec is not None:
            before_exec()

    return hasty


async def open_then_die(argv, **options):
    process = await open_process(argv, **options)
    if when == "after-start" and argv[0] != "/bin/sh":  # the bot, not its guard
        os.kill(os.getpid(), signal.SIGKILL)
    return process


rp._make_preexec = make_hasty_preexec
trio.lowlevel.open_process = open_then_die
# A bot that records its start and ignores the end of its input.
BOT = (
    "import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
    "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"
)


async def main():
    async with rp.open_bot_process(BotCommand((sys.executable, "-c", BOT, started))):
        await trio.sleep(600)

trio.run(main)
"""


@pytest.mark.parametrize("when", ["before-exec", "after-start"])
def test_a_referee_killed_while_starting_a_bot_leaves_no_bot(tmp_path: Path, when: str) -> None:
    """The guard knows the bot's group before the bot's program runs: a referee killed
    at once, even before it could learn its bot's pid, leaves nothing running."""
    spawned, started = tmp_path / "spawned", tmp_path / "started"
    referee = subprocess.Popen(
        [sys.executable, "-c", HASTY_REFEREE, when, str(spawned), str(started)],
        stderr=subprocess.PIPE,
    )
    _, err = referee.communicate(timeout=60)
    assert referee.returncode == -signal.SIGKILL, err.decode(errors="replace")
    bot = int(spawned.read_text())
    try:
        assert wait_until(lambda: gone(bot), 10), "the bot outlived the referee"
        # Nor did the bot's program (in a pid namespace of its own under bwrap when it is
        # contained) survive, if it ran at all.
        assert wait_until(lambda: not processes_naming(str(started)), 10)
    finally:
        if not gone(bot):
            os.kill(bot, signal.SIGKILL)


def start_guarded(guard: GroupGuard, code: str) -> subprocess.Popen[bytes]:
    """Start ``code`` as a bot is started: in a session and group of its own, announced
    to ``guard`` between fork and exec."""
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=guard.announce_in_child,
    )


@pytest.fixture
async def guard() -> AsyncIterator[GroupGuard]:
    started = await GroupGuard.start("a test bot")
    assert started is not None
    yield started
    await started.close()


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes] | int]]:
    """Processes (or pids) to kill after the test, in case it failed half way."""
    started: list[subprocess.Popen[bytes] | int] = []
    yield started
    for process in started:
        if isinstance(process, int):
            if not gone(process):
                os.kill(process, signal.SIGKILL)
        elif process.poll() is None:
            process.kill()
            process.wait()


async def close_pipe(guard: GroupGuard) -> trio.Process:
    """What the kernel does when the referee dies: the write end closes, no disarm."""
    guard._fd = None  # nothing more may be written to it
    process = guard._process
    assert process.stdin is not None
    await process.stdin.aclose()
    return process


async def test_a_disarmed_guard_leaves_the_group_alone(
    guard: GroupGuard, processes: list[subprocess.Popen[bytes] | int]
) -> None:
    group = start_guarded(guard, "import time; time.sleep(600)")
    processes.append(group)
    await guard.close()
    assert guard._process.returncode == 0
    assert group.poll() is None  # still running: the guard was told it is not needed


# Forks a child that stays in the group, one that moves to a group of its own (in the
# same session), one that starts a session of its own and one whose own child starts a
# session of its own, and prints the pids of the first three and of that grandchild.
FAMILY = """
import os, time
for move in (None, os.setpgrp, os.setsid, "grandchild"):
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        if move == "grandchild":
            if os.fork():
                time.sleep(600)
                os._exit(0)
            os.setsid()
        elif move is not None:
            move()
        os.write(ready_w, b"%d" % os.getpid())
        time.sleep(600)
        os._exit(0)
    print(int(os.read(ready_r, 20)), flush=True)
time.sleep(600)
"""


async def test_a_guard_whose_pipe_closes_kills_the_group_the_session_and_the_children(
    guard: GroupGuard, processes: list[subprocess.Popen[bytes] | int]
) -> None:
    family = start_guarded(guard, FAMILY)
    processes.append(family)
    assert family.stdout is not None
    in_group, in_session, own_session, far = (int(family.stdout.readline()) for _ in range(4))
    processes.extend([in_group, in_session, own_session, far])
    assert os.getpgid(in_session) == in_session and os.getsid(in_session) == family.pid
    assert os.getsid(own_session) == own_session and os.getsid(far) == far
    with trio.fail_after(10):
        await (await close_pipe(guard)).wait()
    assert wait_until(lambda: family.poll() is not None, 5)
    assert family.returncode == -signal.SIGKILL
    # A child of the bot in a session of its own is reached as the child it is (a
    # sandbox's pid 1 is one).
    assert wait_until(lambda: gone(in_group) and gone(in_session) and gone(own_session), 5)
    # Out of reach, as documented: a grandchild that started a session of its own.
    assert not gone(far)


async def test_a_guard_told_of_no_group_kills_nothing(guard: GroupGuard) -> None:
    """The referee died, or the bot failed to start, before a group was announced."""
    with trio.fail_after(10):
        assert await (await close_pipe(guard)).wait() == 0


async def test_a_bot_runs_unguarded_when_its_guard_cannot_start(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    open_process = trio.lowlevel.open_process

    async def no_shell(argv: list[str], **options: Any) -> trio.Process:
        if argv[0] == "/bin/sh":
            raise FileNotFoundError(2, "No such file or directory", "/bin/sh")
        return await open_process(argv, **options)

    monkeypatch.setattr(trio.lowlevel, "open_process", no_shell)
    code = "import sys; print(sys.stdin.readline().strip(), flush=True)"
    async with open_bot_process(BotCommand((sys.executable, "-c", code))) as bot:
        assert bot.guard is None
        await bot.send(b"hello\n")
        line = b""
        with trio.fail_after(10):
            while not line.endswith(b"\n"):
                line += await bot.receive_some()
        assert line == b"hello\n"
    assert "runs unguarded: [Errno 2] No such file or directory: '/bin/sh'" in caplog.text
