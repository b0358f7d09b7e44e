"""How long rendering replay pages takes: one replay, and a hundred in one command.

Each ``taki-referee replay render`` run pays Python's start and the referee's imports
once; a batch (``render FILE... -o DIR``) then re-plays and writes each page. The goal
is that 100 replays cost at most 10x one. Replays are 2-player games of random legal
moves (seeded, so every run renders the same games). The two commands are timed in
turn, ``--runs`` times each; the medians, their ratio and the load average are printed.

    .venv/bin/python benchmarks/render.py [--runs 5] [--replays 100]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from referee.core.replay import Replay
from referee.rules import Rules

GOAL = 10.0


def write_replays(folder: Path, count: int) -> list[Path]:
    paths = []
    for k in range(count):
        replay = Replay(f"game{k}", 1000 + k, Rules(), ["a", "b"], master_seed=7)
        state = replay.new_game()
        rng = random.Random(k)
        while not state.is_over:
            seat = state.to_act()[0]
            action = rng.choice(state.legal_actions(seat))
            replay.record_action(seat, action, True, ms=round(rng.uniform(0.1, 50), 1))
            state.apply(action, seat, last_card=True)
        replay.finish(state.result())
        path = folder / f"game{k}.json"
        replay.save(path)
        paths.append(path)
    return paths


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--replays", type=int, default=100)
    args = parser.parse_args()
    referee = str(Path(sys.executable).with_name("taki-referee"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = write_replays(root, args.replays)
        one: list[float] = []
        many: list[float] = []
        for _ in range(args.runs):
            one.append(timed([referee, "replay", "render", str(paths[0]), "-o",
                              str(root / "one.html")]))
            many.append(timed([referee, "replay", "render", *map(str, paths), "-o",
                               str(root / "pages")]))
        actions = sum(len(Replay.load(p).log) for p in paths) / len(paths)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {args.runs} runs each, {args.replays} replays of"
          f" {actions:.0f} actions on average, load average {load} ({os.cpu_count()} CPUs)")
    low, high = statistics.median(one), statistics.median(many)
    print(f"1 replay     median {low:6.2f} s  (runs: {' '.join(f'{t:.2f}' for t in one)})")
    print(f"{args.replays} replays  median {high:6.2f} s  (runs: "
          f"{' '.join(f'{t:.2f}' for t in many)})")
    ratio = high / low
    print(f"ratio={ratio:.2f} ({args.replays} replays over one; goal <= {GOAL:g}:"
          f" {'OK' if ratio <= GOAL else 'over the goal'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
