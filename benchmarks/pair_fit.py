"""The Bradley-Terry fit from pair counts at a season's size, this tree against an anchor
commit, in one run.

``taki-referee ratings`` and ``report`` rate a competition's season from its pair counts
(docs/ratings.md, "Rating from pair counts"): the fit and 200 resamples of the counts.
This draws a season's counts (``--bots`` bots, each pair met with chance ``--density``,
Poisson(``--games``) games a pair, results from true strengths, few draws), then times
``rate_pair_counts`` on them in a process of each tree, alternating (anchor, this,
this, anchor, ...), ``--rounds`` times each: CPU and wall seconds, their medians, the load
average, and that both gave the same Elo and intervals (to 10^-6). OpenBLAS runs on
``--threads`` threads in both (default 1, as the command line runs it; 0: OpenBLAS's
own default, a thread a CPU).

Run from the repository root: ``python benchmarks/pair_fit.py [--anchor main]``. Last
line: ``pair fit N bots P pairs: anchor A s; this B s (CPU, medians)``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.anchor import checked_out  # noqa: E402

if TYPE_CHECKING:
    from referee.ratings import PairCounts


def counts(bots: int, density: float, games: float, seed: int) -> PairCounts:
    """A season's pair counts, drawn (imports the tree's ``referee`` when called)."""
    import numpy as np

    from referee.ratings import PairCounts

    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 1.0, bots)
    first, second = np.triu_indices(bots, 1)
    met = rng.random(len(first)) < density
    first, second = first[met], second[met]
    played = np.maximum(1, rng.poisson(games, len(first)))
    win = 1.0 / (1.0 + np.exp(strength[second] - strength[first]))
    wins = rng.binomial(played, win * 0.98)
    draws = rng.binomial(played - wins, 0.02)
    losses = played - wins - draws
    per_bot = np.bincount(first, played, bots) + np.bincount(second, played, bots)
    return PairCounts(tuple(f"bot{i:04d}" for i in range(bots)),
                      tuple(int(g) for g in per_bot), tuple(first.tolist()),
                      tuple(second.tolist()), tuple(wins.tolist()), tuple(draws.tolist()),
                      tuple(losses.tolist()))


def worker(args: argparse.Namespace) -> None:
    """Time one fit in this process and print it as JSON."""
    from referee.ratings import rate_pair_counts

    season = counts(args.bots, args.density, args.games, args.seed)
    cpu, wall = time.process_time(), time.perf_counter()
    report = rate_pair_counts(season, resamples=200, seed=0)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(json.dumps({"cpu": cpu, "wall": wall, "pairs": len(season.first),
                      "bots": [[b.name, b.elo, *(b.ci95 or ())] for b in report.bots]}))


def timed(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--bots",
               str(args.bots), "--density", str(args.density), "--games", str(args.games),
               "--seed", str(args.seed)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("OPENBLAS_NUM_THREADS", None)
    if args.threads:
        env["OPENBLAS_NUM_THREADS"] = str(args.threads)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--anchor", default="main", help="the commit to compare with")
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--density", type=float, default=0.63, help="pairs that met")
    parser.add_argument("--games", type=float, default=3.2, help="games a pair, mean")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each tree")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1,
                        help="OpenBLAS threads (0: its default)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load()}")
    seen: dict[str, list[dict[str, Any]]] = {"anchor": [], "this": []}
    with tempfile.TemporaryDirectory(prefix="pair-fit-") as folder, \
            checked_out(args.anchor, Path(folder) / "anchor") as anchor:
        for k in range(2 * args.rounds):
            side = ("anchor", "this", "this", "anchor")[k % 4]
            result = timed(anchor if side == "anchor" else REPO, args)
            seen[side].append(result)
            print(f"{side:6}: cpu {result['cpu']:6.2f} s, wall {result['wall']:6.2f} s;"
                  f" load average {load()}", flush=True)
    first, other = seen["anchor"][0]["bots"], seen["this"][0]["bots"]
    same = all(a[0] == b[0] and all(abs(x - y) < 1e-6 for x, y in zip(a[1:], b[1:],
                                                                       strict=True))
               for a, b in zip(first, other, strict=True))
    print(f"same Elo and intervals (to 1e-6): {'yes' if same else 'NO'}")
    cpu = {side: statistics.median(float(r["cpu"]) for r in runs)
           for side, runs in seen.items()}
    print(f"pair fit {args.bots} bots {seen['this'][0]['pairs']} pairs: anchor"
          f" {cpu['anchor']:.1f} s; this {cpu['this']:.1f} s (CPU, medians)")


if __name__ == "__main__":
    main()
