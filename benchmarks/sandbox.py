"""What the sandbox costs: a bot's start and the referee's decisions per second, with and
without ``--sandbox`` (and with a memory and process limit, as a competition would run).

(a) Start: from spawning ``sample_bots/random_bot.py`` to its completed handshake.
(b) Decisions per second: ``play_unit`` plays games between two random bots; timed
    from the end of the first game to the end of the last, so starts are left out.

The two setups alternate, round by round, since a shared machine's speed drifts; the
medians are printed with their ratio (sandboxed over plain) and the load average.

Run from the repository root: ``.venv/bin/python benchmarks/sandbox.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import attrs
import trio

from referee.config.bot_commands import make_command
from referee.core.clock import TimeControl
from referee.core.outcomes import GameOutcome, MatchSettings
from referee.core.schedule import match_games
from referee.core.specs import BotSpec, ResourceLimits, Sandbox
from referee.match.unit import play_unit
from referee.shell.bots import open_bot
from referee.shell.limits import limit_backend

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


def bot(name: str, seed: int, sandboxed: bool) -> BotSpec:
    command = make_command(f"python {RANDOM_BOT} {seed}")
    if sandboxed:
        command = attrs.evolve(command, sandbox=Sandbox(),
                               limits=ResourceLimits(memory_mb=256, pids=64))
    return BotSpec(name, command)


async def start_ms(sandboxed: bool) -> float:
    began = time.perf_counter()
    async with open_bot(bot("b", 1, sandboxed), startup_ms=10_000) as conn:
        assert conn.fault is None, conn.fault
        took = time.perf_counter() - began
    return took * 1000


async def decisions_per_s(sandboxed: bool, games: int) -> float:
    bots = [bot("a", 1, sandboxed), bot("b", 2, sandboxed)]
    settings = MatchSettings(time=TimeControl(move_ms=2000))
    marks: list[tuple[float, int]] = []

    def finished(outcome: GameOutcome) -> None:
        marks.append((time.perf_counter(), outcome.actions))

    await play_unit(match_games(["a", "b"], games + 1, 0, rotation=0), bots, settings,
                     finished)
    decisions = sum(actions for _, actions in marks[1:])
    return decisions / (marks[-1][0] - marks[0][0])


async def run(args: argparse.Namespace) -> None:
    starts: dict[bool, list[float]] = {False: [], True: []}
    rates: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(args.rounds):
        for sandboxed in (False, True):
            starts[sandboxed].append(await start_ms(sandboxed))
            rates[sandboxed].append(await decisions_per_s(sandboxed, args.games))
    print(f"limits backend: {limit_backend().name}; load average {os.getloadavg()[0]:.2f}"
          f" on {os.cpu_count()} CPUs; {args.rounds} rounds, medians")
    for label, data, unit in (("bot start to handshake", starts, "ms"),
                              ("decisions per second", rates, "/s")):
        plain, boxed = statistics.median(data[False]), statistics.median(data[True])
        print(f"{label:24s} plain {plain:9.1f} {unit}  sandboxed {boxed:9.1f} {unit}"
              f"  ratio={boxed / plain:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games", type=int, default=20, help="games per rate measurement")
    trio.run(run, parser.parse_args())
    sys.stdout.flush()


if __name__ == "__main__":
    main()
