"""League throughput, side by side: this tree against a baseline commit, and this tree
with referee worker processes.

Plays the same league (two ``random_bot.py`` bots, two per table, ``--deals`` deals, so
twice as many games; concurrency 2; no replays) into fresh databases with:

- ``baseline``: the referee and the sample bot of ``--baseline`` (default a1f5313, the
  commit before the performance work), checked out into a temporary worktree and run
  from there (its SDK too: the whole stack counts);
- ``current``: this tree, the league in the referee's own process;
- ``workers=1`` and ``workers=2``: this tree, ``--workers N``.

The runs alternate, ``--rounds`` times, so that a change in the machine's load hits
them alike. Prints each run's games per second, the medians, the load average, and the
ratios ``ratio=X.XX`` (current over baseline) and ``workers2/workers1``.

    .venv/bin/python benchmarks/league.py [--deals 250] [--rounds 3] [--baseline a1f5313]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from anchor import checked_out

REPO = Path(__file__).resolve().parent.parent


def league_file(folder: Path, tree: Path, deals: int) -> Path:
    bot = tree / "sample_bots" / "random_bot.py"
    path = folder / "league.toml"
    path.write_text(f"""\
[league]
table_size = 2
deals = {deals}
seed = 1
concurrency = 2

[[bots]]
name = "random1"
command = "python {bot} 1"

[[bots]]
name = "random2"
command = "python {bot} 2"
""")
    return path


def run(tree: Path, folder: Path, deals: int, extra: list[str]) -> float:
    """Games per second of one league, run by the referee of ``tree``."""
    db = folder / f"r{time.monotonic_ns()}.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "protocol")])}
    command = [sys.executable, "-m", "referee.cli", "league", str(league_file(folder, tree, deals)),
               "--db", str(db), "--log-dir", str(folder / "logs"), "--json", *extra]
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=folder, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return 2 * deals / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default="a1f5313")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with checked_out(args.baseline, root / "baseline") as baseline:
            kinds = {
                "baseline": (baseline, []),
                "current": (REPO, []),
                "workers=1": (REPO, ["--workers", "1"]),
                "workers=2": (REPO, ["--workers", "2"]),
            }
            speeds: dict[str, list[float]] = {kind: [] for kind in kinds}
            for _ in range(args.rounds):
                for kind, (tree, extra) in kinds.items():
                    folder = root / kind
                    folder.mkdir(exist_ok=True)
                    speeds[kind].append(run(tree, folder, args.deals, extra))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {2 * args.deals} games a league, {args.rounds}"
          f" rounds, load average {load} ({os.cpu_count()} CPUs)")
    medians = {}
    for kind, values in speeds.items():
        medians[kind] = statistics.median(values)
        runs = " ".join(f"{v:.1f}" for v in values)
        print(f"{kind:10s} median {medians[kind]:6.1f} games/s  (runs: {runs})")
    print(f"workers2/workers1={medians['workers=2'] / medians['workers=1']:.2f}")
    print(f"ratio={medians['current'] / medians['baseline']:.2f} (current over baseline"
          f" {args.baseline}; the goal is 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
