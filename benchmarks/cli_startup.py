"""How long the command line takes to answer when it has nothing to play.

``taki-referee --version``, ``--help``, a subcommand's ``--help`` and an argument error
should cost little more than starting Python: the goal is at most 3x a bare
``python -c "import argparse"``. Each command runs ``--runs`` times, the commands taken
in turn (so a change in the machine's load hits them alike); the medians are printed
with their ratio to the bare start, and the machine's load average.

    .venv/bin/python benchmarks/cli_startup.py [--runs 21]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL = 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    referee = str(Path(sys.executable).with_name("taki-referee"))
    commands = {
        'python -c "import argparse"': [sys.executable, "-c", "import argparse"],
        "taki-referee --version": [referee, "--version"],
        "taki-referee --help": [referee, "--help"],
        "taki-referee match --help": [referee, "match", "--help"],
        "taki-referee match (no bots: error)": [referee, "match"],
        "taki-referee sprt --move-ms x A B (error)": [referee, "sprt", "--move-ms", "x", "a", "b"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, argv in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
            times[name].append(time.perf_counter() - start)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {args.runs} runs each, load average {load}"
          f" ({os.cpu_count()} CPUs)")
    base = statistics.median(times['python -c "import argparse"'])
    worst = 0.0
    for name, samples in times.items():
        median = statistics.median(samples)
        ratio = median / base
        if name.startswith("taki-referee"):
            worst = max(worst, ratio)
        print(f"{name:45s} median {median * 1000:6.1f} ms  {ratio:4.2f}x")
    verdict = "OK" if worst <= GOAL else "over the goal"
    print(f"ratio={worst:.2f} (the slowest over the bare start; goal <= {GOAL:g}x: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
