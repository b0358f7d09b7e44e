"""The connection to one bot: every misbehaviour becomes the right typed fault.

These tests drive ``BotConnection`` directly with real bot processes
(tests/hostile_bots/ and sample_bots/random_bot.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest
import trio
from taki_protocol import Decide, GameStart, Rules, TimeControl

from referee.bots import BotConnection, open_bot
from referee.faults import BotCrashed, BotProtocolError, BotTimeout
from referee.process import BotCommand
from referee.settings import BotSpec

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = Path(__file__).resolve().parent / "hostile_bots"
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


def script(path: Path, *args: str) -> BotSpec:
    return BotSpec(path.stem, BotCommand((sys.executable, str(path), *args)))


def hostile(name: str, *args: str) -> BotSpec:
    return script(HOSTILE / f"{name}.py", *args)


def inline(code: str) -> BotSpec:
    return BotSpec("inline", BotCommand((sys.executable, "-c", code)))


@pytest.fixture(autouse=True)
def no_leftover_processes() -> None:
    assert psutil.Process().children(recursive=True) == []


async def start_game(conn: BotConnection) -> None:
    await conn.send(
        GameStart(
            game_id="g",
            seat=0,
            players=2,
            names=["a", "b"],
            rules=Rules(preset="super-taki-2018"),
            time=TimeControl(move_ms=1000, reaction_ms=1000),
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
        answer, elapsed = await conn.request(decide(conn), 1000)
        assert answer.choice in (0, 1)
        assert 0 <= elapsed < 1000
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
    async with open_bot(bot, startup_ms=300) as conn:
        assert not conn.alive
        assert type(conn.fault) is fault
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
        answer, elapsed = await conn.request(second, 2000)
        assert answer.id == second.id
        assert elapsed > 150


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
    code = (
        "import os, time, msgpack\n"
        "os.read(0, 65536)\n"
        "os.write(1, msgpack.packb({'type': 'bot_hello', 'protocol': 1, 'name': 'deaf'}))\n"
        "time.sleep(60)\n"
    )
    async with open_bot(inline(code), startup_ms=5000) as conn:
        await start_game(conn)
        big = decide(conn, {"filler": "x" * 300_000})  # more than a pipe holds
        with trio.fail_after(2), pytest.raises(BotTimeout, match="did not read its input"):
            await conn.request(big, 200)
        assert not conn.alive
        assert isinstance(conn.fault, BotTimeout)
