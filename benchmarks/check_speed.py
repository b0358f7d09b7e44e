"""How long ``taki-referee check`` takes for each sample bot.

Runs the whole compliance run (every scenario) against each sample bot, ``--runs`` times
(default 3), and prints the wall-clock seconds of each run, their median and whether
every scenario passed (and the scenarios that failed). The JavaScript and C bots are
included when they are built (``./tasks test`` builds them). ``--busy N`` runs them
beside N busy processes per CPU (other users' jobs): a busy machine must fail no sound
bot. The last line: ``failed runs: F of R`` (the goal: 0).

    .venv/bin/python benchmarks/check_speed.py [--runs 3] [--busy 4]
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import time
from pathlib import Path

import trio
from overload import busy

from referee.compliance.run import CheckSettings, check_bot
from referee.config.bot_commands import parse_bot_arg

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
    failed_runs = total = 0
    for name, command in BOTS.items():
        if not available(name):
            print(f"{name:12} not built, skipped")
            continue
        seconds = []
        failures: collections.Counter[str] = collections.Counter()
        for _ in range(runs):
            began = time.monotonic()
            report = await check_bot(parse_bot_arg(f"{name}={command}", 0), CheckSettings())
            seconds.append(time.monotonic() - began)
            failed = [o.name for o in report.outcomes if not o.passed]
            failures.update(failed)
            failed_runs += bool(failed)
            total += 1
        runs_text = " ".join(f"{s:.2f}" for s in seconds)
        verdict = "all passed" if not failures else f"FAILED: {dict(failures)}"
        print(f"{name:12} median {statistics.median(seconds):.2f} s  (runs: {runs_text})"
              f"  {len(report.outcomes)} scenarios, {verdict}", flush=True)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load}")
    print(f"failed runs: {failed_runs} of {total}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0,
                        help="busy processes per CPU beside the checks (default 0)")
    args = parser.parse_args()
    with busy(args.busy * (os.cpu_count() or 1)):
        trio.run(measure, args.runs)


if __name__ == "__main__":
    main()
