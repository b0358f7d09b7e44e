"""The ISMCTS sample bot against greedy_bot, heads-up, at a move limit of 1000 ms.

Plays ``--games`` games in ``--parallel`` matches at once (each from its own master
seed; seats rotate, each deal is played from both seats) and prints the ISMCTS bot's
wins, its share with a 95% Wilson interval, the forfeits of each side and the ISMCTS
bot's longest answer. The goal: at least 60% of the games, and never a timeout.

    .venv/bin/python benchmarks/ismcts.py [--games 200] [--parallel 2] [--ms 300]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def match(games: int, seed: int, ms: int, logs: Path) -> dict[str, object]:
    referee = str(Path(sys.executable).with_name("taki-referee"))
    bots = REPO / "sample_bots"
    command = [referee, "match", f"ismcts=python {bots / 'ismcts_bot.py'} {ms} {seed}",
               f"greedy=python {bots / 'greedy_bot.py'}",
               "--games", str(games), "--seed", str(seed), "--move-ms", "1000",
               "--json", "--log-dir", str(logs), "--progress-interval", "0"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def wilson(wins: float, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    z = 1.96
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--ms", type=int, default=300, help="the ISMCTS bot's MS")
    args = parser.parse_args()
    per = math.ceil(args.games / args.parallel / 2) * 2  # whole deals: both seats
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.parallel) as pool:
        runs = list(pool.map(lambda k: match(per, 1000 + k, args.ms, Path(tmp) / str(k)),
                             range(args.parallel)))
    games = [g for run in runs for g in run["games"]]  # type: ignore[attr-defined]
    wins = draws = 0.0
    forfeits: dict[str, int] = {}
    longest = 0.0
    for game in games:
        places = {p["bot"]: p["place"] for p in game["players"]}
        if places["ismcts"] < places["greedy"]:
            wins += 1
        elif places["ismcts"] == places["greedy"]:
            draws += 1
        for p in game["players"]:
            if p["forfeit"]:
                key = f"{p['bot']} {p['forfeit']['reason']}"
                forfeits[key] = forfeits.get(key, 0) + 1
            if p["bot"] == "ismcts" and p["time_ms"]["max"] is not None:
                longest = max(longest, p["time_ms"]["max"])
    n = len(games)
    score = wins + draws / 2
    low, high = wilson(score, n)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{n} games, ISMCTS at {args.ms} ms a decision, greedy_bot, --move-ms 1000;"
          f" {time.perf_counter() - start:.0f} s; load average {load}")
    print(f"ismcts wins {wins:.0f}, draws {draws:.0f}, losses {n - wins - draws:.0f}:"
          f" {score / n:.1%} (95% {low:.1%} .. {high:.1%})")
    print(f"forfeits: {forfeits or 'none'}; the ISMCTS bot's longest answer {longest:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
