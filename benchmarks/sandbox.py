"""What containing and sandboxing a bot cost: a bot's start and the referee's decisions per
second, for a bot run as it is (``plain``: ``TAKI_REFEREE_CONTAIN=off``), ``contained``
(the default: a pid namespace of its own and the system call filter) and under
``--sandbox`` (with a memory and process limit, as a competition would run).

(a) Start: from spawning ``sample_bots/random_bot.py`` to its completed handshake.
(b) Decisions per second: ``play_unit`` plays games between two random bots; timed
    from the end of the first game to the end of the last, so starts are left out.

The three setups alternate, round by round, since a shared machine's speed drifts; the
medians are printed with their ratios to plain and the load average before and after.

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
from referee.shell.sandbox import CONTAIN_VARIABLE, containment

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


SETUPS = ("plain", "contained", "sandboxed")


def setup(name: str) -> None:
    """Run the next bots the way ``name`` says."""
    if name == "plain":
        os.environ[CONTAIN_VARIABLE] = "off"
    else:
        os.environ.pop(CONTAIN_VARIABLE, None)
    containment.cache_clear()
    if name != "plain" and not containment().contained:
        raise SystemExit(f"bots cannot be contained here: {containment().why}")


def bot(name: str, seed: int, how: str) -> BotSpec:
    command = make_command(f"python {RANDOM_BOT} {seed}")
    if how == "sandboxed":
        command = attrs.evolve(command, sandbox=Sandbox(),
                               limits=ResourceLimits(memory_mb=256, pids=64))
    return BotSpec(name, command)


async def start_ms(how: str) -> float:
    began = time.perf_counter()
    async with open_bot(bot("b", 1, how), startup_ms=10_000) as conn:
        assert conn.fault is None, conn.fault
        took = time.perf_counter() - began
    return took * 1000


async def decisions_per_s(how: str, games: int) -> float:
    bots = [bot("a", 1, how), bot("b", 2, how)]
    settings = MatchSettings(time=TimeControl(move_ms=2000))
    marks: list[tuple[float, int]] = []

    def finished(outcome: GameOutcome) -> None:
        marks.append((time.perf_counter(), outcome.actions))

    await play_unit(match_games(["a", "b"], games + 1, 0, rotation=0), bots, settings,
                     finished)
    decisions = sum(actions for _, actions in marks[1:])
    return decisions / (marks[-1][0] - marks[0][0])


async def run(args: argparse.Namespace) -> None:
    starts: dict[str, list[float]] = {how: [] for how in SETUPS}
    rates: dict[str, list[float]] = {how: [] for how in SETUPS}
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        for how in SETUPS:
            setup(how)
            for _ in range(args.starts):
                starts[how].append(await start_ms(how))
            rates[how].append(await decisions_per_s(how, args.games))
    print(f"limits backend: {limit_backend().name}; load average {load:.2f} before,"
          f" {os.getloadavg()[0]:.2f} after, on {os.cpu_count()} CPUs; {args.rounds} rounds"
          f" ({args.starts} starts and {args.games} games a round), medians")
    for label, data, unit in (("bot start to handshake", starts, "ms"),
                              ("decisions per second", rates, "/s")):
        plain = statistics.median(data["plain"])
        cells = [f"plain {plain:7.1f} {unit}"]
        for how in SETUPS[1:]:
            value = statistics.median(data[how])
            cells.append(f"{how} {value:7.1f} {unit} ({value / plain:.2f}x)")
        print(f"{label:24s} " + "  ".join(cells))
        if args.verbose:
            for how in SETUPS:
                print(f"  {how:10s} " + " ".join(f"{v:.0f}" for v in data[how]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games", type=int, default=20, help="games per rate measurement")
    parser.add_argument("--starts", type=int, default=3, help="starts timed per round")
    parser.add_argument("--verbose", action="store_true", help="print every measurement")
    trio.run(run, parser.parse_args())
    sys.stdout.flush()


if __name__ == "__main__":
    main()
