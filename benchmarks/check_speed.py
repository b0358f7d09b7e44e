"""How long ``taki-referee check`` takes for each sample bot.

Runs the whole compliance run (every scenario) against each sample bot, ``--runs`` times
(default 3), and prints the wall-clock seconds of each run, their median and whether
every scenario passed. The JavaScript and C bots are included
when they are built (``./tasks test`` builds them).

    .venv/bin/python benchmarks/check_speed.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import trio

from referee.compliance.run import CheckSettings, check_bot
from referee.config.settings import parse_bot_arg

REPO = Path(__file__).resolve().parent.parent
BOTS = {
    "random_bot": f"python {REPO / 'sample_bots' / 'random_bot.py'}",
    "greedy_bot": f"python {REPO / 'sample_bots' / 'greedy_bot.py'}",
    "js": f"node {REPO / 'sample_bots' / 'js' / 'bot.js'}",
    "c": str(REPO / "sample_bots" / "c" / "taki_bot"),
}


def available(name: str) -> bool:
    if name == "js":
        return (REPO / "sample_bots" / "js" / "node_modules").is_dir()
    if name == "c":
        return (REPO / "sample_bots" / "c" / "taki_bot").exists()
    return True


async def measure(runs: int) -> None:
    for name, command in BOTS.items():
        if not available(name):
            print(f"{name:12} not built, skipped")
            continue
        seconds = []
        passed = True
        for _ in range(runs):
            began = time.monotonic()
            report = await check_bot(parse_bot_arg(f"{name}={command}", 0), CheckSettings())
            seconds.append(time.monotonic() - began)
            passed = passed and report.passed
        runs_text = " ".join(f"{s:.2f}" for s in seconds)
        print(f"{name:12} median {statistics.median(seconds):.2f} s  (runs: {runs_text})"
              f"  {len(report.outcomes)} scenarios, {'all passed' if passed else 'FAILED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    trio.run(measure, parser.parse_args().runs)


if __name__ == "__main__":
    main()
