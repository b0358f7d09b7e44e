"""How close the referee's decision rate comes to the raw cost of talking to a process.

(a) A raw Trio + msgpack echo: this process writes a msgpack map the size of a real
    ``decide`` request to a Python child, which decodes it and writes it back; this
    process decodes the echo. Round trips per second.
(b) Full referee decisions per second: ``play_unit`` plays games between two
    ``sample_bots/random_bot.py`` processes; a decision is one action of a game result
    (``GameOutcome.actions``). Timed from the end of the first game to the end of the
    last, so that starting and stopping the bots is left out.

Both are measured ``--rounds`` times, interleaved, since the speed of a shared machine
drifts; each round also shows the CPU time per decision of the referee and of the bots.
Each round also prints the CPU ratio, the referee's CPU per decision over this process's
CPU per echo round trip (the goal: at most 2 in every round); it depends much less on
whether waking the other process finds an idle CPU than the rates do. The last lines are
``ratio=X.XX``: (b) over (a), the median of the rounds, with the machine's load average,
and ``cpu_ratio=X.XX``, the median of the rounds' CPU ratios (and their largest).
``--anchor COMMIT`` also runs the ``ipc.py`` of an anchor commit (checked out beside
the tree, ``benchmarks/anchor.py``) once a round, alternating with this tree, and
prints both referees' CPU per decision side by side. ``--profile``
also profiles the referee during (b) and prints where its time goes; ``--minimal`` adds
(c), the referee between two bots that skip the bot SDK (raw msgpack, no checks), which
tells the referee's share of the cost from the bots'.

Run from the repository root: ``.venv/bin/python benchmarks/ipc.py``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs
import msgpack  # type: ignore[import-untyped]
import trio
from taki_protocol import Decide

from referee.core.clock import TimeControl
from referee.core.outcomes import GameOutcome, MatchSettings
from referee.core.schedule import match_games
from referee.core.specs import BotCommand, BotSpec
from referee.match.unit import play_unit
from referee.rules import Rules, new_game, view

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"

ECHO_CHILD = r"""
import os, msgpack
unpacker = msgpack.Unpacker(raw=False)
while True:
    data = os.read(0, 65536)
    if not data:
        break
    unpacker.feed(data)
    for obj in unpacker:
        out = msgpack.packb(obj, use_bin_type=True)
        while out:
            out = out[os.write(1, out):]
"""

# A bot reduced to the minimum: raw msgpack, no checks, but the same choices as
# random_bot.py with the same seed (so the games are the same). It separates the
# referee's own cost from that of the bot SDK (taki_protocol.run_bot).
MINIMAL_BOT = r"""
import os, random, sys, msgpack
rng = random.Random(int(sys.argv[1]))
unpacker = msgpack.Unpacker(raw=False)
def write(obj):
    out = msgpack.packb(obj)
    while out:
        out = out[os.write(1, out):]
while True:
    data = os.read(0, 65536)
    if not data:
        break
    unpacker.feed(data)
    for message in unpacker:
        kind = message["type"]
        if kind == "hello":
            write({"type": "bot_hello", "protocol": 1, "name": "minimal"})
        elif kind in ("decide", "react"):
            choice = rng.randrange(len(message["legal"]))
            write({"type": "action", "id": message["id"], "choice": choice, "last_card": True})
        elif kind in ("error", "shutdown"):
            raise SystemExit
"""


def sample_request(seed: int = 7) -> dict[str, object]:
    """The wire map of a ``decide`` request of median size from a real game, made as the
    referee makes them (each view holds the events since the seat's previous request)."""
    state = new_game(2, seed, Rules())
    rng = random.Random(seed)
    cursors = [0, 0]
    requests: list[tuple[int, dict[str, object]]] = []
    while not state.is_over and len(requests) < 200:
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        wire = Decide(
            id=len(requests),
            view=view(state, seat, cursors[seat]),
            legal=[a.to_wire() for a in legal],
            time_left_ms=None,
            deadline_ms=1000,
        ).to_wire()
        cursors[seat] = len(state.events)
        requests.append((len(msgpack.packb(wire, use_bin_type=True)), wire))
        state.apply(rng.choice(legal), seat)
    requests.sort(key=lambda item: item[0])
    return requests[len(requests) // 2][1]


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


async def echo_rate(message: dict[str, object], seconds: float) -> tuple[float, float]:
    """Round trips per second through a child process that echoes ``message``, and
    the CPU time of this process per round trip, in microseconds."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", ECHO_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    unpacker = msgpack.Unpacker(raw=False)
    count = 0
    cpu = cpu_seconds(resource.RUSAGE_SELF)
    try:
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            await process.stdin.send_all(msgpack.packb(message, use_bin_type=True))
            while True:
                try:
                    echoed = next(unpacker)
                    break
                except StopIteration:
                    unpacker.feed(await process.stdout.receive_some(65536))
            assert echoed["id"] == message["id"]
            count += 1
        cpu = cpu_seconds(resource.RUSAGE_SELF) - cpu
    finally:
        await process.stdin.aclose()
        await process.wait()
    return count / elapsed, cpu / count * 1e6


@attrs.frozen
class RefereeRun:
    rate: float  # decisions per second
    decisions: int
    seconds: float
    referee_cpu_us: float  # CPU time of this process per decision, over the same games
    bots_cpu_us: float  # CPU time of the two bots per decision, whole run


async def referee_rate(games: int, minimal: bool = False, basis: str | None = None,
                       ) -> RefereeRun:
    """Decisions per second of ``play_unit`` between two random bots and the referee's
    CPU time per decision, both from the end of the first game to the end of the last
    (so that starting and stopping the bots is left out, as (a) leaves out starting its
    child), and the CPU time per decision of the bots (whole run: a child's CPU time
    is known once it was reaped). With ``minimal``, between two copies of
    ``MINIMAL_BOT`` instead."""
    bots = [
        BotSpec(
            f"bot{i}",
            BotCommand((sys.executable, "-c", MINIMAL_BOT, str(i)))
            if minimal
            else BotCommand((sys.executable, str(RANDOM_BOT), str(i))),
        )
        for i in (1, 2)
    ]
    time_control = TimeControl(move_ms=5000, reaction_ms=5000)
    if basis is not None:
        time_control = attrs.evolve(time_control, time_basis=basis)
    settings = MatchSettings(time=time_control)
    marks: list[tuple[float, float, int]] = []  # (time, referee CPU, actions) a game

    def finished(outcome: GameOutcome) -> None:
        marks.append((time.perf_counter(), cpu_seconds(resource.RUSAGE_SELF), outcome.actions))

    bots_cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
    await play_unit(match_games([b.name for b in bots], games + 1, 0), bots, settings, finished)
    bots_cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - bots_cpu  # the bots were reaped
    decisions = sum(actions for _, _, actions in marks[1:])
    seconds = marks[-1][0] - marks[0][0]
    referee_cpu = marks[-1][1] - marks[0][1]
    every = decisions + marks[0][2]
    return RefereeRun(
        decisions / seconds, decisions, seconds, referee_cpu / decisions * 1e6,
        bots_cpu / every * 1e6,
    )


def anchor_cpu_us(tree: Path, args: argparse.Namespace) -> tuple[float, float]:
    """One round of the anchor tree's own ``ipc.py``: its referee's CPU per decision and
    its process's CPU per echo round trip, in microseconds."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "protocol")])}
    done = subprocess.run(
        [sys.executable, str(tree / "benchmarks" / "ipc.py"), "--rounds", "1", "--games",
         str(args.games), "--seconds", str(args.seconds)],
        cwd=tree, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"CPU per decision: referee (\d+) us.*per echo round trip: (\d+) us",
                      done.stdout)
    assert found is not None, done.stdout
    return float(found[1]), float(found[2])


async def run(args: argparse.Namespace, anchor: Path | None = None) -> tuple[float, float]:
    message = sample_request()
    size = len(msgpack.packb(message, use_bin_type=True))
    ratios = []
    cpu_ratios = []
    side_by_side: list[tuple[float, float]] = []
    before = (0.0, 0.0)
    for round_ in range(1, args.rounds + 1):
        if anchor is not None and round_ % 2 == 1:
            before = await trio.to_thread.run_sync(anchor_cpu_us, anchor, args)
        # Interleaved rounds: the speed of a shared machine drifts, the ratio less so.
        echo, echo_cpu_us = await echo_rate(message, args.seconds)
        profiler = cProfile.Profile() if args.profile else None
        if profiler is not None:
            profiler.enable()
        ref = await referee_rate(args.games, basis=args.time_basis)
        if profiler is not None:
            profiler.disable()
        ratios.append(ref.rate / echo)
        print(f"round {round_}:")
        print(f"  (a) echo round trips, trio + msgpack, {size}-byte map: {echo:8,.0f} /s")
        print(
            f"  (b) referee decisions, play_unit, 2 x random_bot.py: {ref.rate:8,.0f} /s"
            f"  ({ref.decisions} decisions in {ref.seconds:.2f} s)"
        )
        print(
            f"      CPU per decision: referee {ref.referee_cpu_us:.0f} us,"
            f" bots {ref.bots_cpu_us:.0f} us; per echo round trip: {echo_cpu_us:.0f} us"
            f" of this process's CPU, {1e6 / echo:.0f} us in all"
        )
        cpu_ratios.append(ref.referee_cpu_us / echo_cpu_us)
        if anchor is not None:
            if round_ % 2 == 0:
                before = await trio.to_thread.run_sync(anchor_cpu_us, anchor, args)
            side_by_side.append((before[0], ref.referee_cpu_us))
            print(f"      anchor {args.anchor}: referee {before[0]:.0f} us per decision (echo"
                  f" {before[1]:.0f} us); this tree: {ref.referee_cpu_us:.0f} us")
        print(f"      ratio {ratios[-1]:.2f}; CPU ratio (referee per decision over echo per"
              f" round trip) {cpu_ratios[-1]:.2f}")
        if args.minimal:
            low = await referee_rate(args.games, minimal=True)
            print(
                f"  (c) the same with two minimal raw-msgpack bots:       {low.rate:8,.0f} /s"
                f"  ({low.decisions} decisions; referee {low.referee_cpu_us:.0f} us, bots"
                f" {low.bots_cpu_us:.0f} us of CPU per decision; ratio {low.rate / echo:.2f})"
            )
        if profiler is not None:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
            print("  (the profiler slows (b) down several times)")
            print(out.getvalue())
    if side_by_side:
        print(f"referee CPU per decision, medians: anchor {args.anchor}"
              f" {statistics.median(a for a, _ in side_by_side):.0f} us, this tree"
              f" {statistics.median(b for _, b in side_by_side):.0f} us")
    print(f"largest CPU ratio of the rounds: {max(cpu_ratios):.2f}")
    return statistics.median(ratios), statistics.median(cpu_ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of (a) (default 3)")
    parser.add_argument("--games", type=int, default=300, help="games of (b) (default 300)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="(a) then (b), this many times; the ratio is the median")
    parser.add_argument("--profile", action="store_true", help="profile the referee in (b)")
    parser.add_argument("--minimal", action="store_true",
                        help="also (c): the referee between two minimal bots (no bot SDK)")
    parser.add_argument("--time-basis", choices=("cpu", "wall"), default=None,
                        help="the time basis of (b) (default: the referee's default)")
    parser.add_argument("--anchor", metavar="COMMIT",
                        help="also run this commit's ipc.py, alternating (e.g. 2b78c12)")
    args = parser.parse_args()
    if args.anchor is None:
        ratio, cpu_ratio = trio.run(run, args)
    else:
        from anchor import checked_out

        with tempfile.TemporaryDirectory() as tmp, \
                checked_out(args.anchor, Path(tmp) / "anchor") as tree:
            ratio, cpu_ratio = trio.run(run, args, tree)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load} ({os.cpu_count()} CPUs)")
    print(f"ratio={ratio:.2f}")
    print(f"cpu_ratio={cpu_ratio:.2f} (the median of the rounds; the goal is at most 2)")


if __name__ == "__main__":
    main()
