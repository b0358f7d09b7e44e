"""``serve --timing``'s figures in process: the loop watch names a step that blocked the
loop, and every answer is stamped with when its request arrived (only with timing)."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import trio
from served import Served
from starlette.types import Message, Receive, Scope, Send

from referee.server import loop_watch
from referee.server.app import build_app
from referee.server.loop_watch import SLOW_STEP_S, ArrivalStamps, LoopWatch
from referee.server.thread_cpu import ThreadClock


async def _blocks_the_loop() -> None:
    time.sleep(SLOW_STEP_S * 3)  # what a handler must never do: the loop waits


async def test_a_step_that_blocks_the_loop_is_counted_and_named() -> None:
    watch = LoopWatch()
    trio.lowlevel.add_instrument(watch)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_blocks_the_loop)
            for _ in range(5):
                await trio.sleep(0)
    finally:
        trio.lowlevel.remove_instrument(watch)
    figures = watch.take()
    assert figures.slow_steps == 1
    assert figures.longest >= SLOW_STEP_S * 3
    assert figures.longest_task.endswith("_blocks_the_loop")
    assert 0 < figures.busy <= 1
    assert "1 steps over 20 ms" in figures.line() and "_blocks_the_loop" in figures.line()
    assert figures.busiest[0][0].endswith("_blocks_the_loop")  # the busiest task first
    assert watch.take().slow_steps == 0  # a new period


async def test_every_answer_tells_when_its_request_arrived() -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await trio.sleep(0.01)
        await send({"type": "http.response.start", "status": 404,
                    "headers": [(b"server-timing", b"total;dur=1.0")]})
        await send({"type": "http.response.body", "body": b""})

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    scope: dict[str, Any] = {"type": "http", "headers": []}
    before = time.monotonic()
    await ArrivalStamps(app)(scope, receive, send)
    headers = [v.decode() for k, v in sent[0]["headers"] if k == b"server-timing"]
    assert headers[0] == "total;dur=1.0"  # the page's own timing is kept
    app_part, arrived_part = headers[1].split(", ")
    assert float(app_part.removeprefix("app;dur=")) >= 10
    arrived = float(arrived_part.removeprefix('arrived;desc="').rstrip('"'))
    assert before <= arrived <= time.monotonic()


async def test_only_a_server_with_timing_tells_when_requests_arrived(served: Served) -> None:
    timed = httpx.AsyncClient(transport=httpx.ASGITransport(
        app=build_app(served.state, timing=True)), base_url="http://competition.test")
    async with timed:
        for path in ("/api/competition", "/no-such-page"):
            told = (await timed.get(path)).headers["server-timing"]
            assert "arrived;desc=" in told and "app;dur=" in told, path
            plain = (await served.client.get(path)).headers.get("server-timing", "")
            assert "arrived" not in plain, path


def _spin(seconds: float) -> None:
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


async def test_a_worker_thread_that_computes_is_named_with_its_cpu_time() -> None:
    clock = ThreadClock()
    clock.take(1.0)  # counted from here on
    began = time.monotonic()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.to_thread.run_sync, _spin, 0.3)
        while nursery.child_tasks:
            clock.glance()
            await trio.sleep(0.01)
    shares = clock.take(time.monotonic() - began)
    assert shares, "no thread counted"
    # the worker thread, named after its function while it ran, holds the time
    assert "_spin" in shares[0].name
    assert shares[0].cpus > 0.1
    line = ThreadClock.line(1.0, shares)
    assert line.startswith("threads, last 1 s, CPUs: ") and shares[0].name in line
    # a new period: the spinner's time is not counted again
    assert all(s.cpus < 0.1 for s in clock.take(1.0))


async def test_the_watch_says_the_loops_figures_and_the_threads_every_period(
        monkeypatch: Any) -> None:
    monkeypatch.setattr(loop_watch, "REPORT_S", 0.05)
    said: list[str] = []
    with trio.move_on_after(0.5):
        await loop_watch.watch_loop(said.append)
    assert any(line.startswith("event loop, last") for line in said)
    assert any(line.startswith("threads, last") for line in said)


def test_a_thread_that_ended_in_the_period_is_still_counted() -> None:
    # a Trio worker thread ends after 10 s idle: a trim every 10 s or more has ended
    # before the report
    clock = ThreadClock()
    clock.take(1.0)
    worker = threading.Thread(target=_spin, args=(0.3,), name="trim_logs from ladder")
    worker.start()
    while worker.is_alive():
        clock.glance()
        time.sleep(0.01)
    worker.join()
    shares = clock.take(1.0)
    ended = [s for s in shares if s.name.startswith("ended: ")]
    assert ended and ended[0].name == "ended: trim_logs from ladder"
    assert ended[0].cpus > 0.2
