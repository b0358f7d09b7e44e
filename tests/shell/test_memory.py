"""The in-memory bot (``referee.testing``): its transport keeps the contract of a
bot process (``BotTransport``), and a connection over it sees the same typed faults."""

from __future__ import annotations

import signal

import pytest
import trio
import trio.testing
from memory_bots import ScriptedBot
from taki_protocol import BotHello, Hello, Shutdown
from trio.testing import MockClock

from referee.core.faults import BotCrashed, BotTimeout
from referee.testing import PIPE_CAPACITY_BYTES, BotEnd, memory_bot_pair, open_memory_bot


async def read_all(end: BotEnd) -> bytes:
    data = b""
    while chunk := await end.read():
        data += chunk
    return data


async def test_bytes_go_both_ways_in_order_then_the_end(autojump_clock: MockClock) -> None:
    transport, end = memory_bot_pair()
    assert transport.returncode is None and transport.status() == "running"
    assert not transport.readable_now()
    await transport.send(b"abc")
    await transport.send(b"def")
    await end.write(b"12")
    assert transport.readable_now()
    assert await transport.receive_some(1) == b"1"
    assert await transport.receive_some() == b"2"
    assert not transport.readable_now()
    start = trio.current_time()
    with pytest.raises(trio.TooSlowError):
        await transport.receive_some(deadline=start + 1)
    assert trio.current_time() == start + 1
    await transport.close_input()
    assert await read_all(end) == b"abcdef"  # then the end of its input
    end.close_output()
    assert transport.readable_now() and await transport.receive_some() == b""
    assert transport.returncode is None  # a bot that closed its output may still run


async def test_a_full_pipe_holds_a_send_until_its_timeout(autojump_clock: MockClock) -> None:
    transport, end = memory_bot_pair()
    start = trio.current_time()
    with pytest.raises(trio.TooSlowError):
        await transport.send(b"x" * (PIPE_CAPACITY_BYTES + 1), timeout_s=2)
    assert trio.current_time() == start + 2
    # Once the bot reads, the writer goes on.
    transport, end = memory_bot_pair()
    size = 3 * PIPE_CAPACITY_BYTES
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.send, b"y" * size)
        got = 0
        while got < size:
            got += len(await end.read())
    assert got == size


async def test_an_exit_ends_the_output_after_what_was_written(
    autojump_clock: MockClock,
) -> None:
    async def script(end: BotEnd) -> None:
        await end.read()  # the hello
        await end.write(b"last words")
        end.write_stderr("one\ntwo\n")
        end.exit(3)

    transport, _ = memory_bot_pair()  # a transport nobody runs stays running
    assert transport.returncode is None
    async with open_memory_bot("x", script, startup_ms=1000) as conn:
        transport = conn.process
        assert await transport.wait() == 3
        assert transport.status() == "exited with status 3"
        assert transport.stderr_tail(1) == "two"
        with pytest.raises(BotCrashed, match="exited with status 3"):
            await transport.send(b"more")
        # The handshake read the bot's last words (not msgpack) and its end.
        assert conn.fault is not None


async def test_a_kill_stops_the_bot_at_once_and_twice_is_harmless(
    autojump_clock: MockClock,
) -> None:
    stopped = trio.Event()

    async def script(end: BotEnd) -> None:
        assert isinstance(await end.receive(), Hello)
        await end.send(BotHello(name="x"))
        try:
            await trio.sleep_forever()
        finally:
            stopped.set()

    async with open_memory_bot("x", script, startup_ms=1000) as conn:
        assert conn.fault is None and conn.bot_name == "x"
        await conn.process.kill()
        await trio.testing.wait_all_tasks_blocked()
        assert stopped.is_set()  # its coroutine was cancelled
        await conn.process.kill()
        assert conn.process.returncode == -signal.SIGKILL
        assert conn.process.status() == "killed by signal SIGKILL"
        assert await conn.process.receive_some() == b""
        with pytest.raises(BotCrashed):
            await conn.process.send(b"x")


async def test_a_healthy_bot_exits_by_itself_when_told_to_shut_down(
    autojump_clock: MockClock,
) -> None:
    bot = ScriptedBot("x")
    async with open_memory_bot("x", bot, startup_ms=1000) as conn:
        assert conn.alive
    assert isinstance(bot.seen[-1], Shutdown)
    assert conn.process.returncode == 0


async def test_a_silent_bot_times_out_its_handshake(autojump_clock: MockClock) -> None:
    async def script(end: BotEnd) -> None:
        await trio.sleep_forever()

    start = trio.current_time()
    async with open_memory_bot("x", script, startup_ms=1500) as conn:
        assert isinstance(conn.fault, BotTimeout)
        assert trio.current_time() >= start + 1.5
    assert conn.process.returncode == -signal.SIGKILL


async def test_what_a_bot_script_raises_leaves_the_block(autojump_clock: MockClock) -> None:
    async def script(end: BotEnd) -> None:
        raise ValueError("a bug in the script")

    with pytest.raises(BaseExceptionGroup) as info:
        async with open_memory_bot("x", script, startup_ms=1000):
            await trio.sleep(1)
    assert info.group_contains(ValueError, match="a bug in the script")
