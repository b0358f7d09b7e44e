"""How precisely the referee enforces time limits, with two matches running at once.

Goal: a bot that answers 20 ms before its limit is never forfeited, and one that answers
10 ms after it always is. Two matches are played concurrently in this process (as a
league with ``concurrency = 2`` plays them):

* match A, ``early-1`` against ``early-2``: both answer 20 ms before the limit;
* match B, ``early-3`` against ``late``: ``late`` answers 10 ms after the limit, so each
  game ends at its first request (the referee then starts a new ``late`` process for the
  next game); match B keeps starting games until match A is done.

A bot's "limit" is the request's ``deadline_ms``, counted on the bot's own monotonic
clock from the moment it read the request; that is what a careful bot does. The referee
measures from the moment it has written the request to the moment it has read the
answer, and calls an answer late past ``deadline_ms`` plus the grace (``grace_ms`` of
the time control, ``DEFAULT_GRACE_MS`` unless ``--grace-ms`` is given).

Run from the repository root: ``.venv/bin/python benchmarks/time_precision.py``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import trio
from taki_protocol import Decide, React

from referee.core.clock import DEFAULT_GRACE_MS, TimeControl
from referee.core.faults import BotTimeout
from referee.core.outcomes import GameOutcome, MatchSettings
from referee.core.schedule import ScheduledGame, match_games
from referee.core.specs import BotCommand, BotSpec
from referee.match.unit import play_unit
from referee.shell.bots import BotConnection

# A bot that answers ``OFFSET_MS`` after the request's deadline (negative: before it),
# timed from the moment it read the request. Usage: python -c BOT OFFSET_MS SEED
BOT = r"""
import os, random, sys, time
from taki_protocol import (
    EOF, NEED_DATA, Answer, BotHello, Codec, Decide, Error, Hello, React, Shutdown,
)

offset_s = int(sys.argv[1]) / 1000
rng = random.Random(int(sys.argv[2]))
codec = Codec("bot")
received = time.monotonic()


def write(data):
    while data:
        data = data[os.write(1, data):]


while True:
    message = codec.next_message()
    if message is NEED_DATA:
        data = os.read(0, 65536)
        received = time.monotonic()
        codec.receive_data(data)
        continue
    if message is EOF or isinstance(message, Error | Shutdown):
        break
    if isinstance(message, Hello):
        write(codec.send(BotHello(name="timed")))
    elif isinstance(message, Decide | React):
        target = received + message.deadline_ms / 1000 + offset_s
        delay = target - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        choice = rng.randrange(len(message.legal))
        write(codec.send(Answer(id=message.id, choice=choice, last_card=True)))
        # How much later than planned the answer left: sleep precision, scheduling.
        sys.stderr.write(f"behind_plan_ms {(time.monotonic() - target) * 1000:.3f}\n")
"""

EARLY_MS = -20
LATE_MS = 10


def timed_bot(name: str, offset_ms: int, seed: int) -> BotSpec:
    return BotSpec(name, BotCommand((sys.executable, "-c", BOT, str(offset_ms), str(seed))))


class Recorder:
    """Wraps ``BotConnection.request`` to record, per bot, how each request went."""

    def __init__(self) -> None:
        # bot name -> per request, how long past the limit the referee got the answer
        # (measured time minus deadline_ms) or gave up waiting for it
        self.samples: dict[str, list[float]] = {}
        self._original = BotConnection.request

    def install(self) -> None:
        original = self._original
        samples = self.samples

        async def request(
            conn: BotConnection, message: Decide | React, deadline_ms: int, **options: Any
        ) -> Any:
            start = trio.current_time()
            try:
                answer, elapsed = await original(conn, message, deadline_ms, **options)
            except BotTimeout:
                # The referee stopped waiting: how far past the limit that happened.
                past = (trio.current_time() - start) * 1000 - message.deadline_ms
                samples.setdefault(conn.name, []).append(past)
                raise
            samples.setdefault(conn.name, []).append(elapsed - message.deadline_ms)
            return answer, elapsed

        BotConnection.request = request  # type: ignore[method-assign,assignment]

    def uninstall(self) -> None:
        BotConnection.request = self._original  # type: ignore[method-assign]


def percentiles(values: list[float]) -> str:
    if not values:
        return "no samples"
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return (
        f"min {ordered[0]:+6.1f}  p50 {at(0.5):+6.1f}  p99 {at(0.99):+6.1f}"
        f"  max {ordered[-1]:+6.1f} ms"
    )


async def run(args: argparse.Namespace) -> int:
    time_control = TimeControl(
        move_ms=args.move_ms,
        reaction_ms=args.move_ms,
        startup_ms=10_000,
        grace_ms=args.grace_ms,
    )
    settings = MatchSettings(time=time_control, log_dir=args.log_dir)
    a_bots = [timed_bot("early-1", EARLY_MS, 1), timed_bot("early-2", EARLY_MS, 2)]
    b_bots = [timed_bot("early-3", EARLY_MS, 3), timed_bot("late", LATE_MS, 4)]
    a_done = trio.Event()
    outcomes: list[GameOutcome] = []

    def b_games() -> Iterator[ScheduledGame]:
        index = 0
        while not a_done.is_set():
            yield from match_games(["early-3", "late"], 2, args.seed + 1000 + index)
            index += 1

    async def match_a() -> None:
        try:
            games = match_games(["early-1", "early-2"], args.games, args.seed)
            outcomes.extend(await play_unit(games, a_bots, settings, match_name="a"))
        finally:
            a_done.set()

    async def match_b() -> None:
        outcomes.extend(await play_unit(b_games(), b_bots, settings, match_name="b"))

    lags: list[float] = []

    async def watch_loop() -> None:
        """How late the referee's event loop wakes up for a timer."""
        while not a_done.is_set():
            asked = trio.current_time() + 0.005
            await trio.sleep_until(asked)
            lags.append((trio.current_time() - asked) * 1000)

    recorder = Recorder()
    recorder.install()
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)
    ]
    started = time.monotonic()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(match_a)
            nursery.start_soon(match_b)
            nursery.start_soon(watch_loop)
    finally:
        recorder.uninstall()
        for burner in burners:
            burner.kill()
            burner.wait()
    took = time.monotonic() - started
    behind = [
        float(line.split()[1])
        for log in args.log_dir.glob("*early*.log")
        for line in log.read_text().splitlines()
        if line.startswith("behind_plan_ms ")
    ]

    forfeits: dict[str, dict[str, int]] = {}
    for outcome in outcomes:
        for seat in outcome.seats:
            if seat.forfeit is not None:
                counts = forfeits.setdefault(seat.bot, {})
                reason = str(seat.forfeit.reason)
                counts[reason] = counts.get(reason, 0) + 1

    load = f", {args.burners} CPU burners" if args.burners else ""
    print(
        f"move_ms {args.move_ms}, grace {args.grace_ms} ms, 2 matches at once{load},"
        f" {len(outcomes)} games in {took:.1f} s, {os.cpu_count()} cores,"
        f" load average {os.getloadavg()[0]:.1f}"
    )
    early = [s for name, v in recorder.samples.items() if name.startswith("early") for s in v]
    late = recorder.samples.get("late", [])
    early_forfeits = sum(sum(v.values()) for k, v in forfeits.items() if k.startswith("early"))
    late_forfeits = sum(forfeits.get("late", {}).values())
    late_games = sum(1 for o in outcomes if any(s.bot == "late" for s in o.seats))
    print(
        f"early ({EARLY_MS:+d} ms): {len(early)} answers, {early_forfeits} forfeits"
        f"{forfeits_text(forfeits, 'early')}"
    )
    print(f"  measured by the referee, past the limit: {percentiles(early)}")
    print(f"  answer sent, past the bot's plan:       {percentiles(behind)}")
    print(
        f"late  ({LATE_MS:+d} ms): {late_games} games, {len(late)} requests,"
        f" {late_forfeits} forfeits{forfeits_text(forfeits, 'late')}"
    )
    # Usually the referee gives up at the deadline; when its event loop is late, the
    # answer may be read first, and then judged late on its measured time.
    print(f"  referee gave up or read, past the limit: {percentiles(late)}")
    print(f"referee event loop, timer wake-up lag:     {percentiles(lags)}")
    # Every request to "late" must forfeit it (which ends its game).
    ok = early_forfeits == 0 and late_forfeits == len(late)
    print(f"early_forfeits={early_forfeits}/{len(early)} late_forfeits={late_forfeits}/{len(late)}"
          f" {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


def forfeits_text(forfeits: dict[str, dict[str, int]], prefix: str) -> str:
    merged: dict[str, int] = {}
    for name, counts in forfeits.items():
        if name.startswith(prefix):
            for reason, n in counts.items():
                merged[reason] = merged.get(reason, 0) + n
    if not merged:
        return ""
    return " (" + ", ".join(f"{r} {n}" for r, n in sorted(merged.items())) + ")"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--move-ms", type=int, default=200, help="the limit (default 200)")
    parser.add_argument("--grace-ms", type=int, default=DEFAULT_GRACE_MS,
                        help=f"the referee's grace (default DEFAULT_GRACE_MS = {DEFAULT_GRACE_MS})")
    parser.add_argument("--games", type=int, default=1,
                        help="games of match A (default 1; a game takes 10 to 60 s at 200 ms)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--burners", type=int, default=0,
                        help="processes spinning on the CPU meanwhile, to load the machine")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="time-precision-") as logs:
        args.log_dir = Path(logs)
        return trio.run(run, args)


if __name__ == "__main__":
    sys.exit(main())
