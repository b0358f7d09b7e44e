"""The connection to one bot: every misbehaviour becomes the right typed fault.

These tests drive ``BotConnection`` directly with real bot processes
(tests/hostile_bots/ and sample_bots/random_bot.py).
"""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path

import psutil
import pytest
import trio
from taki_protocol import Decide, GameRules, GameStart, TimeLimits

from referee.core.faults import BotCrashed, BotProtocolError, BotTimeout
from referee.core.margins import GOODBYE_MS
from referee.core.specs import BotCommand, BotSpec
from referee.shell.bots import BotConnection, open_bot
from referee.shell.sandbox import containment

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parents[1] / "hostile_bots"
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


def script(path: Path, *args: str) -> BotSpec:
    return BotSpec(path.stem, BotCommand((sys.executable, str(path), *args)))


def hostile(name: str, *args: str) -> BotSpec:
    return script(HOSTILE / f"{name}.py", *args)


def inline(code: str) -> BotSpec:
    return BotSpec("inline", BotCommand((sys.executable, "-c", code)))


def deaf_bot() -> BotSpec:
    """Completes the handshake, then neither reads its input nor exits."""
    return inline(
        "import os, time, msgpack\n"
        "os.read(0, 65536)\n"
        "os.write(1, msgpack.packb({'type': 'bot_hello', 'protocol': 1, 'name': 'deaf'}))\n"
        "time.sleep(60)\n"
    )


@pytest.fixture(autouse=True)
def no_leftover_processes() -> None:
    assert psutil.Process().children(recursive=True) == []


@pytest.fixture
def long_goodbye(monkeypatch: pytest.MonkeyPatch) -> None:
    """A goodbye long enough for any bot to read its error and exit on a loaded machine:
    the tests that use it are about the message arriving, not about how fast."""
    monkeypatch.setattr("referee.shell.bots.GOODBYE_MS", 30000)


async def start_game(conn: BotConnection) -> None:
    await conn.send(
        GameStart(
            game_id="g",
            seat=0,
            players=2,
            names=["a", "b"],
            rules=GameRules(preset="super-taki-2018"),
            time=TimeLimits(move_ms=1000, reaction_ms=1000),
        ),
        timeout_s=1,
    )


def decide(conn: BotConnection, view: dict[str, object] | None = None) -> Decide:
    return Decide(
        id=conn.next_id(),
        view=view if view is not None else {"phase": "play"},
        legal=[{"kind": "draw"}, {"kind": "pass"}],
        deadline_ms=1000,
    )


async def test_healthy_bot_plays_and_exits_on_shutdown() -> None:
    async with open_bot(script(RANDOM_BOT), startup_ms=5000) as conn:
        assert conn.alive and conn.bot_name == "random-bot"
        await start_game(conn)
        verdict = await conn.request(decide(conn), 1000)
        assert verdict.answer is not None and verdict.answer.choice in (0, 1)
        assert verdict.answered and 0 <= verdict.charged_ms < 1000
        process = conn.process
    # shutdown gave the bot the chance to exit by itself
    assert process.returncode == 0


@pytest.mark.parametrize(
    ("bot", "fault", "detail"),
    [
        (hostile("exit_at_start"), BotCrashed, "exited with status 3"),
        (hostile("wrong_version"), BotProtocolError, "protocol version"),
        (inline("import time; time.sleep(60)"), BotTimeout, "startup time of 300 ms"),
    ],
)
async def test_handshake_faults(bot: BotSpec, fault: type, detail: str) -> None:
    # Only the silent bot must run out of time: the others get a startup time that a
    # Python bot on a loaded machine never needs (at a load of 15 on two cores, half of
    # their starts took more than 300 ms), so each fails for its own reason.
    startup_ms = 300 if fault is BotTimeout else 10_000
    async with open_bot(bot, startup_ms=startup_ms) as conn:
        assert not conn.alive
        assert isinstance(conn.fault, fault)
        assert detail in str(conn.fault)
        assert conn.process.returncode is not None  # stopped at once


async def test_late_answer_is_dropped_after_abandon() -> None:
    async with open_bot(hostile("sleepy", "150"), startup_ms=5000) as conn:
        await start_game(conn)
        with pytest.raises(BotTimeout):
            await conn.request(decide(conn), 50)
        conn.abandon_request()
        assert conn.alive
        # The answer to the first request arrives during the second one and is dropped.
        second = decide(conn)
        verdict = await conn.request(second, 2000)
        assert verdict.answer is not None and verdict.answer.id == second.id
        assert verdict.charged_ms > 150


async def test_crash_near_the_deadline_is_a_crash(tmp_path: Path) -> None:
    """The bot exits at once, but a child it forked holds its pipes: telling end of
    file from silence and waiting for the exit status takes a while, which must not
    count as the bot running out of time."""
    bot = hostile("fork_child", "exit", str(tmp_path / "pid"), "0")
    async with open_bot(bot, startup_ms=5000) as conn:
        await start_game(conn)
        with pytest.raises(BotCrashed, match="exited with status 0"):
            await conn.request(decide(conn), 150)


async def test_input_cut_by_a_send_timeout_ends_the_connection() -> None:
    """A request that cannot be written in time may be cut in the middle: the
    connection cannot be used any more, even with the strikes policy."""
    async with open_bot(deaf_bot(), startup_ms=5000) as conn:
        await start_game(conn)
        big = decide(conn, {"filler": "x" * 300_000})  # more than a pipe holds
        with trio.fail_after(2), pytest.raises(BotTimeout, match="did not read its input"):
            await conn.request(big, 200)
        assert not conn.alive
        assert isinstance(conn.fault, BotTimeout)


# ------------------------------------------------------------ error before a forfeit


@pytest.mark.parametrize(
    ("fault", "reason", "detail"),
    [
        ("version", "protocol", "only protocol version 1 is supported"),
        ("no_name", "protocol", "missing field 'name'"),
        ("long_name", "protocol", "name"),
        ("early_answer", "protocol", "first message must be 'bot_hello'"),
    ],
)
@pytest.mark.usefixtures("long_goodbye")
async def test_handshake_fault_error_reaches_the_bot(
    fault: str, reason: str, detail: str, tmp_path: Path
) -> None:
    """The bot reads the error and exits by itself before the referee would kill it."""
    report = tmp_path / "error.txt"
    async with open_bot(hostile("report_error", fault, str(report)), startup_ms=5000) as conn:
        assert conn.fault is not None and conn.fault.reason == reason
        assert detail in conn.fault.detail
        assert conn.process.returncode == 0  # it exited by itself
    assert report.read_text() == f"{reason}: {conn.fault.public_detail}"


async def test_a_forfeit_waits_for_a_bot_that_ignores_its_error_only_briefly() -> None:
    """The bound itself: a bot that neither reads nor exits costs about its goodbye time
    (GOODBYE_MS, scaled by the host's load)."""
    async with open_bot(deaf_bot(), startup_ms=5000) as conn:
        start = trio.current_time()
        await conn.fail(BotTimeout("no answer within 1000 ms"))
        took = trio.current_time() - start
        assert conn.process.returncode == -signal.SIGKILL
    goodbye = conn.exit_wait_s
    assert goodbye >= GOODBYE_MS / 1000
    assert goodbye <= took < goodbye + 2  # the grace, then the kill; never more


@pytest.mark.usefixtures("long_goodbye")
async def test_a_forfeited_bot_that_reads_its_error_exits_by_itself() -> None:
    """The sample bots print the error and exit (the SDK): the input is closed after
    the error, and the bot is not killed while it exits."""
    async with open_bot(script(RANDOM_BOT), startup_ms=5000) as conn:
        await start_game(conn)
        await conn.fail(BotTimeout("no answer within 1000 ms"))
        assert conn.process.returncode == 0
        assert "referee error (timeout): no answer within 1000 ms" in conn.process.stderr_tail()


async def test_a_timeout_reports_the_deadline_the_bot_was_told() -> None:
    """The referee waits the request's deadline_ms plus its grace; the detail gives the
    deadline_ms the bot was told."""
    async with open_bot(hostile("sleepy", "400"), startup_ms=5000) as conn:
        await start_game(conn)
        request = Decide(id=conn.next_id(), view={}, legal=[{"kind": "draw"}], deadline_ms=100)
        with pytest.raises(BotTimeout) as caught:
            await conn.request(request, 105)
        assert caught.value.detail == "no answer within 100 ms"


async def test_handshake_timeout_reports_the_startup_time_without_the_grace() -> None:
    """The detail names the allowance it applied: the startup time (the grace left out),
    the wait less the time the machine kept the bot off the CPU, the cap, the CPU time."""
    async with open_bot(inline("import time; time.sleep(60)"), startup_ms=200, grace_ms=5) as conn:
        assert conn.fault is not None
        assert re.fullmatch(r"no hello within the startup time of 200 ms: waited \d+ ms, less"
                            r" \d+ ms the machine kept the bot off the CPU \(at most 20500 ms"
                            r" in all\); it used \d+ ms of CPU time", conn.fault.detail)


async def test_crash_detail_keeps_the_stderr_but_tells_the_bots_only_the_exit() -> None:
    code = (
        "import os, sys, msgpack\n"
        "os.read(0, 65536)\n"
        "os.write(1, msgpack.packb({'type': 'bot_hello', 'protocol': 1, 'name': 'x'}))\n"
        "os.read(0, 65536)\n"
        "sys.stderr.write('Traceback: /secret/path/bot.py\\n')\n"
        "sys.exit(1)\n"
    )
    async with open_bot(inline(code), startup_ms=5000) as conn:
        await start_game(conn)
        with pytest.raises(BotCrashed) as caught:
            await conn.request(decide(conn), 2000)
    fault = caught.value
    assert fault.public_detail == "closed its output: the bot exited with status 1"
    assert fault.detail == (
        "closed its output: the bot exited with status 1; its last stderr lines:\n"
        "Traceback: /secret/path/bot.py"
    )


async def test_a_contained_bot_is_read_from_its_namespaces_first_process() -> None:
    """bwrap runs a contained bot as the child of its own first process: the bot's CPU
    time is read from that child on, the wrapper's own is not the bot's."""
    if not containment().contained:
        pytest.skip("bots cannot be contained here")
    async with open_bot(script(RANDOM_BOT), startup_ms=10_000) as conn:
        meter = conn.cpu
        assert meter is not None and meter.wrapped
        wrapper = psutil.Process(conn.process.pid)
        assert [c.pid for c in wrapper.children()] == [meter.root]
        assert conn.process.pid not in meter.quick().by_pid
        assert conn.process.pid not in meter.sample().by_pid
