"""Bot process supervision, exercised with real Python child processes."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import resource
import signal
import stat
import sys
import tempfile
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import trio
from processes import host_pid

from referee.core.faults import (
    BotCrashed,
    BotFault,
    BotIllegalAction,
    BotProtocolError,
    BotStartError,
    BotTimeout,
)
from referee.core.specs import BotCommand, ResourceLimits
from referee.shell.process import BotProcess, describe_exit_status
from referee.shell.sandbox import containment
from referee.shell.spawn import open_bot_process, rlimits

ECHO = """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
"""

SLEEP_FOREVER = """
import sys, time
sys.stdout.write("ready\\n"); sys.stdout.flush()
time.sleep(600)
"""

# Forks a child that inherits (and keeps) the bot's pipes and sleeps; the bot
# then prints the child's pid and either stays, or exits after a delay.
FORK = """
import os, sys, time
pid = os.fork()
if pid == 0:
    time.sleep(600)
    os._exit(0)
sys.stdout.write(f"{pid}\\n"); sys.stdout.flush()
if sys.argv[1] == "stay":
    time.sleep(600)
time.sleep(float(sys.argv[2]))
os._exit(0)
"""


def python_bot(code: str, *args: str, **kwargs: object) -> BotCommand:
    return BotCommand((sys.executable, "-c", code, *args), **kwargs)  # type: ignore[arg-type]


_pending: weakref.WeakKeyDictionary[BotProcess, bytes] = weakref.WeakKeyDictionary()


async def read_line(bot: BotProcess) -> bytes:
    """One line of the bot's stdout (bytes after it are kept for the next call)."""
    data = _pending.pop(bot, b"")
    with trio.fail_after(2):
        while b"\n" not in data:
            chunk = await bot.receive_some()
            if not chunk:
                raise AssertionError(f"unexpected EOF after {data!r}")
            data += chunk
    line, _, rest = data.partition(b"\n")
    if rest:
        _pending[bot] = rest
    return line + b"\n"


def assert_reaped(pid: int) -> None:
    """The bot itself is gone: not running, and no zombie left behind."""
    assert not psutil.pid_exists(pid)
    assert not os.path.exists(f"/proc/{pid}")


def assert_dead(pid: int) -> None:
    """A descendant of the bot is dead.

    An orphan is reparented to init, which reaps it; an init that does not
    reap (as in some containers) leaves a zombie, which is dead all the same.
    """
    try:
        proc = psutil.Process(pid)
        status = proc.status()
        parent = proc.ppid()
    except psutil.NoSuchProcess:
        return
    assert status == psutil.STATUS_ZOMBIE
    assert parent != os.getpid()


# --------------------------------------------------------------------------- commands


def test_parse_command() -> None:
    cmd = BotCommand.parse("node bot.js --name 'Big Bot'", cwd="/tmp", env={"A": "1"})
    assert cmd.argv == ("node", "bot.js", "--name", "Big Bot")
    assert cmd.cwd == "/tmp"
    assert cmd.env == {"A": "1"}
    assert cmd.limits == ResourceLimits()
    assert cmd.display == "node bot.js --name 'Big Bot'"
    assert BotCommand.parse("a b") == BotCommand(("a", "b"))


@pytest.mark.parametrize("text", ["", "   ", "bot 'unbalanced"])
def test_parse_rejects_bad_commands(text: str) -> None:
    with pytest.raises(ValueError):
        BotCommand.parse(text)


def test_command_validation() -> None:
    with pytest.raises(TypeError):
        BotCommand("python bot.py")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        BotCommand(())
    with pytest.raises(TypeError):
        BotCommand(("bot",), env={"A": 1})
    with pytest.raises(ValueError):
        ResourceLimits(cpu_seconds=0)
    with pytest.raises(TypeError):
        ResourceLimits(open_files=True)


def test_env_is_merged_and_frozen() -> None:
    cmd = BotCommand(("bot",), env={"TAKI_X": "1"})
    env = cmd.child_env()
    assert env is not None
    assert env["TAKI_X"] == "1"
    assert env.get("PATH") == os.environ.get("PATH")
    assert BotCommand(("bot",)).child_env() is None
    with pytest.raises(TypeError):
        cmd.env["TAKI_X"] = "2"  # type: ignore[index]


def test_describe_exit_status() -> None:
    assert describe_exit_status(None) == "still running"
    assert describe_exit_status(0) == "exited with status 0"
    assert describe_exit_status(-signal.SIGKILL) == "killed by signal SIGKILL"
    assert describe_exit_status(-200) == "killed by signal signal 200"


def test_fault_types() -> None:
    reasons = {
        BotTimeout: "timeout",
        BotCrashed: "crash",
        BotProtocolError: "protocol",
        BotIllegalAction: "illegal",
    }
    for cls, reason in reasons.items():
        fault = cls("details here")
        assert isinstance(fault, BotFault)
        assert fault.reason == reason
        assert fault.detail == "details here"
        assert str(fault) == "details here"
        assert pickle.loads(pickle.dumps(fault)).detail == "details here"
    err = BotStartError("foo --x", "executable 'foo' not found")
    assert not isinstance(err, BotFault)
    assert str(err) == "cannot start bot 'foo --x': executable 'foo' not found"
    assert str(pickle.loads(pickle.dumps(err))) == str(err)


# --------------------------------------------------------------------------- start errors


async def test_missing_executable() -> None:
    cmd = BotCommand.parse("definitely-not-a-taki-bot --level 3")
    with pytest.raises(BotStartError) as info:
        async with open_bot_process(cmd):
            pytest.fail("should not start")
    assert str(info.value) == (
        "cannot start bot 'definitely-not-a-taki-bot --level 3': "
        "executable 'definitely-not-a-taki-bot' not found"
    )


async def test_missing_relative_executable_and_cwd(tmp_path: Path) -> None:
    with pytest.raises(BotStartError, match=r"executable './bot' not found"):
        async with open_bot_process(BotCommand(("./bot",), cwd=str(tmp_path))):
            pass
    with pytest.raises(BotStartError, match=r"working directory .* does not exist"):
        async with open_bot_process(BotCommand((sys.executable,), cwd=str(tmp_path / "no"))):
            pass


async def test_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "bot.py"
    script.write_text("print('hi')\n")
    with pytest.raises(BotStartError, match="is not an executable file"):
        async with open_bot_process(BotCommand((str(script),))):
            pass


async def test_spawn_failure_is_a_start_error(tmp_path: Path, uncontained: None) -> None:
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00\x01\x02 not a program")
    junk.chmod(junk.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "junk.log"
    with pytest.raises(BotStartError, match="Exec format error") as info:
        async with open_bot_process(BotCommand((str(junk),)), stderr_path=log):
            pass
    assert str(junk) in str(info.value)
    assert isinstance(info.value.__cause__, OSError)


async def test_a_contained_bot_that_cannot_be_executed_exits_saying_why(tmp_path: Path) -> None:
    # bwrap starts, then cannot execute the bot (its execvp hands a file that is no
    # program to /bin/sh, which fails): the bot crashes at its start, and the last lines
    # of its stderr, which the referee reports, say why.
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00\x01\x02 not a program")
    junk.chmod(junk.stat().st_mode | stat.S_IXUSR)
    async with open_bot_process(BotCommand((str(junk),))) as bot:
        with trio.fail_after(10):
            assert await bot.wait() != 0
        assert f"{junk}: 1:" in bot.stderr_tail()


async def test_executable_found_on_env_path(tmp_path: Path) -> None:
    script = tmp_path / "mybot"
    script.write_text('#!/bin/sh\necho "hello from $TAKI_SEAT"\n')
    script.chmod(0o755)
    cmd = BotCommand(("mybot",), env={"PATH": str(tmp_path), "TAKI_SEAT": "2"})
    async with open_bot_process(cmd) as bot:
        assert await read_line(bot) == b"hello from 2\n"


# --------------------------------------------------------------------------- normal I/O


async def test_echo_round_trip() -> None:
    async with open_bot_process(python_bot(ECHO)) as bot:
        assert bot.returncode is None and bot.poll() is None
        assert bot.status() == "running"
        await bot.send(b"hello\n")
        assert await read_line(bot) == b"hello\n"

        # Full duplex: more than a pipe buffer in each direction at once.
        payload = b"".join(b"%06d\n" % i for i in range(50_000))
        received = bytearray()

        async def reader() -> None:
            while len(received) < len(payload):
                received.extend(await bot.receive_some())

        with trio.fail_after(2):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(reader)
                await bot.send(payload)
        assert bytes(received) == payload

        await bot.close_input()
        with trio.fail_after(2):
            assert await bot.receive_some() == b""
            assert await bot.wait() == 0
        assert bot.status() == "exited with status 0"
        with pytest.raises(BotCrashed, match="exited with status 0"):
            await bot.send(b"more\n")
    assert_reaped(bot.pid)


async def test_env_and_cwd(tmp_path: Path) -> None:
    code = "import os; print(os.getcwd()); print(os.environ['TAKI_X'], 'PATH' in os.environ)"
    cmd = python_bot(code, cwd=str(tmp_path), env={"TAKI_X": "42"})
    async with open_bot_process(cmd) as bot:
        assert (await read_line(bot)).decode().strip() == str(tmp_path.resolve())
        assert await read_line(bot) == b"42 True\n"


async def test_exits_at_start(tmp_path: Path) -> None:
    code = "import sys; print('boom: bad config', file=sys.stderr); sys.exit(3)"
    log = tmp_path / "logs" / "bot.stderr"
    async with open_bot_process(python_bot(code), stderr_path=log) as bot:
        with trio.fail_after(2):
            assert await bot.receive_some() == b""
            assert await bot.wait() == 3
        assert bot.returncode == 3
        assert "boom: bad config" in bot.stderr_tail()
        with pytest.raises(BotCrashed) as info:
            await bot.send(b"hello\n")
        assert info.value.reason == "crash"
        assert "exited with status 3" in info.value.detail
    assert log.read_text() == "boom: bad config\n"
    assert_reaped(bot.pid)


async def test_stdin_closed_by_bot_is_a_crash(uncontained: None) -> None:
    # A contained bot's pipes are also held by bwrap: a bot that closes its input is
    # then a bot that does not read it (a timeout).
    code = "import os, sys, time; os.close(0); print('closed', flush=True); time.sleep(600)"
    async with open_bot_process(python_bot(code)) as bot:
        assert await read_line(bot) == b"closed\n"
        with pytest.raises(BotCrashed, match="stdin") as info, trio.fail_after(2):
            await bot.send(b"x" * 100_000)
        assert isinstance(info.value.__cause__, trio.BrokenResourceError)


async def test_kill_is_idempotent() -> None:
    async with open_bot_process(python_bot(SLEEP_FOREVER)) as bot:
        assert await read_line(bot) == b"ready\n"
        await bot.kill()
        assert bot.returncode == -signal.SIGKILL
        assert bot.status() == "killed by signal SIGKILL"
        await bot.kill()
        with pytest.raises(BotCrashed):
            await bot.send(b"x\n")
    assert_reaped(bot.pid)
    # After the block, the pipes are closed: I/O is a crash, not a hang.
    with pytest.raises(BotCrashed):
        await bot.receive_some()
    await bot.kill()


async def test_stderr_tail_keeps_last_lines() -> None:
    code = "import sys\nfor i in range(5000): print('line', i, file=sys.stderr)\nsys.exit(1)"
    async with open_bot_process(python_bot(code)) as bot:
        with trio.fail_after(2):
            assert await bot.wait() == 1
        assert bot.stderr_tail(3) == "line 4997\nline 4998\nline 4999"
        tail = bot.stderr_tail(1000).splitlines()
        assert all(line.startswith("line ") for line in tail)
        assert bot.stderr_tail(0) == ""


# --------------------------------------------------------------------------- cleanup


async def test_cancelled_body_kills_and_reaps() -> None:
    start = time.monotonic()
    with trio.move_on_after(0.5) as scope:
        async with open_bot_process(python_bot(SLEEP_FOREVER)) as bot:
            assert await read_line(bot) == b"ready\n"
            await bot.receive_some()  # never answers
    assert scope.cancelled_caught
    assert time.monotonic() - start < 5  # a hang would last minutes
    assert bot.returncode == -signal.SIGKILL
    assert_reaped(bot.pid)


async def test_read_past_its_deadline_is_too_slow() -> None:
    async with open_bot_process(python_bot(SLEEP_FOREVER)) as bot:
        assert await read_line(bot) == b"ready\n"
        start = trio.current_time()
        with pytest.raises(trio.TooSlowError):
            await bot.receive_some(deadline=start + 0.1)
        assert trio.current_time() - start >= 0.1
        assert bot.returncode is None and bot.poll() is None  # the bot is left running


@pytest.mark.parametrize("exc_type", [ValueError, KeyboardInterrupt])
async def test_exception_in_body_propagates_unwrapped(exc_type: type[BaseException]) -> None:
    with pytest.raises(exc_type) as info:
        async with open_bot_process(python_bot(SLEEP_FOREVER)) as bot:
            assert await read_line(bot) == b"ready\n"
            raise exc_type("stop")
    assert type(info.value) is exc_type
    assert_reaped(bot.pid)


async def test_fault_in_body_propagates_unwrapped() -> None:
    with pytest.raises(BotTimeout, match="too slow"):
        async with open_bot_process(python_bot(SLEEP_FOREVER)) as bot:
            raise BotTimeout("too slow")
    assert_reaped(bot.pid)


async def test_new_session_and_group() -> None:
    code = "import os; print(os.getpid(), flush=True); input()"
    async with open_bot_process(python_bot(code)) as bot:
        pid = host_pid(int(await read_line(bot)), bot.pid)
        assert os.getpgid(pid) == os.getsid(pid) == bot.pid


@pytest.mark.parametrize(
    ("mode", "delay"),
    [("stay", "0"), ("exit", "0"), ("exit", "0.2")],
    ids=["bot-stays", "bot-exits", "bot-exits-while-read-pending"],
)
async def test_forked_children_do_not_hang_referee(mode: str, delay: str) -> None:
    start = time.monotonic()
    async with open_bot_process(python_bot(FORK, mode, delay)) as bot:
        child = host_pid(int(await read_line(bot)), bot.pid)
        assert os.getpgid(child) == bot.pid
        if mode == "exit":
            # The child still holds stdout open, yet the read reports EOF soon
            # after the bot itself exits, and writing is a crash.
            with trio.fail_after(1):  # a far deadline of its own does not change that
                assert await bot.receive_some(deadline=trio.current_time() + 30) == b""
            assert bot.returncode == 0
            with pytest.raises(BotCrashed):
                await bot.send(b"x\n")
            assert psutil.Process(child).status() != psutil.STATUS_ZOMBIE
    assert time.monotonic() - start < 5  # a hang would last minutes
    assert_reaped(bot.pid)
    assert_dead(child)


# Forks a child that moves to a process group of its own (staying in the bot's session)
# and prints its pid; the bot then stays, or exits at once.
MOVE_GROUP = """
import os, sys, time
ready_r, ready_w = os.pipe()
if os.fork() == 0:
    os.setpgid(0, 0)
    print(os.getpid(), flush=True)
    os.write(ready_w, b"x")
    time.sleep(600)
    os._exit(0)
os.read(ready_r, 1)
if sys.argv[1] == "stay":
    time.sleep(600)
"""


@pytest.mark.parametrize("mode", ["stay", "exit"], ids=["bot-stays", "bot-exits"])
async def test_descendant_in_another_group_is_killed(mode: str) -> None:
    """A descendant that leaves the bot's process group is still in its session, where
    cleanup finds it."""
    async with open_bot_process(python_bot(MOVE_GROUP, mode)) as bot:
        moved = host_pid(int(await read_line(bot)), bot.pid)
        try:
            assert os.getpgid(moved) == moved and os.getsid(moved) == bot.pid
            if mode == "exit":
                with trio.fail_after(2):
                    assert await bot.wait() == 0
        except BaseException:
            os.kill(moved, signal.SIGKILL)
            raise
    assert_reaped(bot.pid)
    assert_dead(moved)


async def test_a_child_in_a_session_of_its_own_is_killed() -> None:
    """The bot's own child is killed by its pid, whatever its session (the sandbox's pid
    1 is such a child)."""
    code = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    print(os.getpid(), flush=True)
    time.sleep(600)
    os._exit(0)
time.sleep(600)
"""
    async with open_bot_process(python_bot(code)) as bot:
        child = host_pid(int(await read_line(bot)), bot.pid)
        try:
            assert os.getsid(child) == child
        except BaseException:
            os.kill(child, signal.SIGKILL)
            raise
    assert_reaped(bot.pid)
    assert_dead(child)


async def test_escaped_descendant_does_not_hang_referee() -> None:
    """A grandchild that starts a session of its own survives an uncontained bot
    (documented), but cleanup returns; a contained bot's dies with its pid namespace."""
    code = """
import os, sys, time
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        print(os.getpid(), flush=True)
        time.sleep(600)
    os._exit(0)
time.sleep(600)
"""
    start = time.monotonic()
    async with open_bot_process(python_bot(code)) as bot:
        escaped = host_pid(int(await read_line(bot)), bot.pid)
    try:
        assert time.monotonic() - start < 5  # a hang would last minutes
        assert_reaped(bot.pid)
        if containment().contained:
            assert_dead(escaped)
        else:
            assert psutil.Process(escaped).status() != psutil.STATUS_ZOMBIE
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(escaped, signal.SIGKILL)


async def test_stderr_flood_is_capped(tmp_path: Path) -> None:
    size = 10 * 1024 * 1024
    cap = 1 << 20
    code = (
        f"import sys; sys.stderr.buffer.write(b'x' * {size}); sys.stderr.flush()\n"
        "print('done', flush=True); sys.stdin.read()"
    )
    log = tmp_path / "flood.log"
    start = time.monotonic()
    async with open_bot_process(python_bot(code), stderr_path=log, stderr_cap_bytes=cap) as bot:
        assert await read_line(bot) == b"done\n"
    assert time.monotonic() - start < 5  # a hang would last minutes
    assert bot.stderr_bytes == size
    note = f"\n[... stderr truncated after {cap} bytes ...]\n".encode()
    data = log.read_bytes()
    assert len(data) == cap + len(note)
    assert data == b"x" * cap + note
    assert_reaped(bot.pid)


async def test_stderr_drained_without_log() -> None:
    code = "import sys; sys.stderr.buffer.write(b'y' * 4_000_000); print('done', flush=True)"
    async with open_bot_process(python_bot(code), stderr_path=None) as bot:
        assert await read_line(bot) == b"done\n"
        with trio.fail_after(2):
            await bot.wait()
        assert bot.stderr_bytes == 4_000_000
        assert bot.stderr_tail().startswith("y")


async def test_truncation_note_on_its_own_line(tmp_path: Path) -> None:
    code = "import sys; sys.stderr.write('ab\\ncd\\nef\\n'); sys.stderr.flush()"
    log = tmp_path / "bot.log"
    async with open_bot_process(python_bot(code), stderr_path=log, stderr_cap_bytes=6) as bot:
        await bot.wait()
    assert log.read_text() == "ab\ncd\n[... stderr truncated after 6 bytes ...]\n"


# --------------------------------------------------------------------------- sandboxing


async def test_resource_limits_applied() -> None:
    limits = ResourceLimits(address_space_mb=512, cpu_seconds=5, file_size_mb=3, open_files=64)
    code = """
import resource
for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE"):
    print(*resource.getrlimit(getattr(resource, name)))
try:
    block = bytearray(1 << 30)
except MemoryError:
    print("MemoryError")
else:
    print("allocated")
"""
    async with open_bot_process(python_bot(code, limits=limits)) as bot:
        lines = [(await read_line(bot)).decode().split() for _ in range(5)]
    mib = 1024 * 1024
    assert [list(map(int, line)) for line in lines[:4]] == [
        [512 * mib, 512 * mib],
        [5, 6],
        [3 * mib, 3 * mib],
        [64, 64],
    ]
    assert lines[4] == ["MemoryError"]
    assert rlimits(limits)[0] == (resource.RLIMIT_AS, 512 * mib, 512 * mib)


@pytest.fixture
def inheritable_fd() -> Iterator[tuple[int, str]]:
    """A descriptor the referee leaks on purpose (inheritable, no close-on-exec)."""
    with tempfile.NamedTemporaryFile(prefix="taki-leak-") as tmp:
        fd = fcntl.fcntl(tmp.fileno(), fcntl.F_DUPFD, 150)  # lowest free fd >= 150
        os.set_inheritable(fd, True)
        try:
            yield fd, tmp.name
        finally:
            os.close(fd)


async def test_no_descriptors_inherited(inheritable_fd: tuple[int, str]) -> None:
    fd, leaked_path = inheritable_fd
    assert os.get_inheritable(fd)
    code = "import sys; print('ready', flush=True); sys.stdin.read()"
    async with open_bot_process(python_bot(code)) as bot:
        assert await read_line(bot) == b"ready\n"
        fd_dir = Path(f"/proc/{bot.pid}/fd")
        targets = {int(entry.name): os.readlink(entry) for entry in fd_dir.iterdir()}
    assert {0, 1, 2} <= targets.keys()
    assert all(targets[n].startswith("pipe:") for n in (0, 1, 2))
    assert fd not in targets
    assert leaked_path not in targets.values()



@pytest.mark.slow
async def test_bot_outlives_the_thread_that_started_it() -> None:
    """Trio starts processes from a worker thread that ends after about ten idle
    seconds. Nothing tied to that thread (such as a parent-death signal) may end the
    bot: a long game must not lose its bots. (Real seconds: this test takes ~12 s.)"""
    async with open_bot_process(python_bot(ECHO)) as bot:
        await bot.send(b"before\n")
        assert await read_line(bot) == b"before\n"
        await trio.sleep(12)
        assert bot.returncode is None, bot.status()
        await bot.send(b"after\n")
        assert await read_line(bot) == b"after\n"
