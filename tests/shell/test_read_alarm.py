"""The one timer of a bot's reads (referee.shell.read_alarm): a read that waits past its
deadline times out, one that got its bytes is never woken later, and the pipe stays
usable after either."""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator

import pytest
import trio

from referee.shell.read_alarm import ReadAlarm


@pytest.fixture
async def pipe() -> AsyncIterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    try:
        yield read_end, write_end
    finally:
        trio.lowlevel.notify_closing(read_end)
        os.close(read_end)
        os.close(write_end)


async def _timed_out(alarm: ReadAlarm, deadline: float) -> bool:
    try:
        await alarm.wait_readable(deadline)
    except trio.TooSlowError:
        return True
    return False


async def test_a_read_past_its_deadline_times_out_and_the_pipe_still_reads(
        pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    alarm = ReadAlarm(read_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(alarm.run)
        await trio.sleep(0.01)  # the alarm's task runs: reads take no scope of their own
        start = trio.current_time()
        assert await _timed_out(alarm, start + 0.05)
        assert trio.current_time() - start >= 0.05
        assert alarm.rang_at == pytest.approx(start + 0.05)
        os.write(write_end, b"x")
        assert not await _timed_out(alarm, trio.current_time() + 5)
        assert os.read(read_end, 10) == b"x"
        alarm.stop()


async def test_a_read_that_got_its_bytes_is_not_woken_when_its_deadline_passes(
        pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    alarm = ReadAlarm(read_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(alarm.run)
        await trio.sleep(0.01)
        for _ in range(3):  # each read ends before its deadline; the alarm stays set
            os.write(write_end, b"x")
            assert not await _timed_out(alarm, trio.current_time() + 0.03)
            assert os.read(read_end, 10) == b"x"
        await trio.sleep(0.06)  # the alarm rang for those deadlines: no read was late
        nursery.start_soon(_write_later, write_end, 0.05)
        start = trio.current_time()
        assert not await _timed_out(alarm, start + 5)  # a long read is not cut short
        assert trio.current_time() - start >= 0.05
        assert os.read(read_end, 10) == b"y"
        alarm.stop()


async def _write_later(fd: int, delay: float) -> None:
    await trio.sleep(delay)
    os.write(fd, b"y")


async def test_a_read_brought_forward_ends_then(pipe: tuple[int, int]) -> None:
    read_end, _ = pipe
    alarm = ReadAlarm(read_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(alarm.run)
        await trio.sleep(0.01)

        async def bring_forward() -> None:
            await trio.sleep(0.02)
            alarm.bring_forward(trio.current_time() + 0.02)

        nursery.start_soon(bring_forward)
        deadline = trio.current_time() + 5
        assert await _timed_out(alarm, deadline)
        assert alarm.rang_at < deadline
        alarm.stop()


@pytest.mark.parametrize("brought_forward", [False, True])
async def test_without_its_task_a_read_takes_a_scope_of_its_own(
        pipe: tuple[int, int], brought_forward: bool) -> None:
    read_end, _ = pipe
    alarm = ReadAlarm(read_end)  # its task never runs
    deadline = trio.current_time() + (5 if brought_forward else 0.03)
    async with trio.open_nursery() as nursery:
        if brought_forward:
            nursery.start_soon(_bring_forward_soon, alarm)
        assert await _timed_out(alarm, deadline)
    assert (alarm.rang_at < deadline) is brought_forward
    assert alarm.deadline == math.inf


async def _bring_forward_soon(alarm: ReadAlarm) -> None:
    await trio.sleep(0.01)
    alarm.bring_forward(trio.current_time() + 0.01)


async def test_a_stopped_alarm_wakes_nothing(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    alarm = ReadAlarm(read_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(alarm.run)
        await trio.sleep(0.01)
        os.write(write_end, b"x")
        assert not await _timed_out(alarm, trio.current_time() + 0.02)
        assert os.read(read_end, 10) == b"x"
        alarm.stop()  # set for that deadline when it stopped
    # A later waiter of the descriptor is not woken when that deadline passes.
    with trio.move_on_after(0.1) as waited:
        await trio.lowlevel.wait_readable(read_end)
    assert waited.cancelled_caught
