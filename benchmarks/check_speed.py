"""How long ``taki-referee check`` takes for each sample bot and starter kit.

Runs the whole compliance run (every scenario) against each sample bot, ``--runs`` times
(default 3), and prints the wall-clock seconds of each run, their median and whether
every scenario passed (and, for each failed scenario, how often and its first problem,
which names the time the check allowed). The JavaScript and C bots are included when
they are built (``./tasks test`` builds them). ``--kits`` measures the starter kits
instead (all, or the languages named: ``--kits go java``): each is copied out as a
participant gets it (``taki-referee kit``) and built once with its ``./bot --build``
before the runs, as the kits' tests do (their toolchains must be installed). ``--busy N``
runs them beside N busy processes per CPU (other users' jobs): a busy machine must fail
no sound bot. The last line: ``failed runs: F of R`` (the goal: 0).

    .venv/bin/python benchmarks/check_speed.py [--runs 3] [--busy 4] [--kits [LANG ...]]
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import trio
from overload import busy

from referee.cli.kit import copy_kit, kit_names
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


def built_kits(languages: list[str], where: Path) -> dict[str, str]:
    """Each kit of ``languages`` copied out to ``where`` and built: its command."""
    commands = {}
    for language in languages:
        kit = copy_kit(language, where / language)
        began = time.monotonic()
        done = subprocess.run([str(kit / "bot"), "--build"], cwd=kit, capture_output=True,
                              text=True, timeout=1800)
        if done.returncode != 0:
            raise SystemExit(f"the {language} kit did not build:\n{done.stderr[-2000:]}")
        print(f"{language:12} built in {time.monotonic() - began:.1f} s", flush=True)
        commands[language] = str(kit / "bot")
    return commands


async def measure(bots: dict[str, str], runs: int) -> None:
    failed_runs = total = 0
    for name, command in bots.items():
        if not available(name):
            print(f"{name:12} not built, skipped")
            continue
        seconds = []
        failures: collections.Counter[str] = collections.Counter()
        problems: dict[str, str] = {}
        for _ in range(runs):
            began = time.monotonic()
            report = await check_bot(parse_bot_arg(f"{name}={command}", 0), CheckSettings())
            seconds.append(time.monotonic() - began)
            failed = [o for o in report.outcomes if not o.passed]
            failures.update(o.name for o in failed)
            for outcome in failed:
                detail = "" if outcome.fault is None else f"; {outcome.fault.public_detail}"
                problems.setdefault(outcome.name, f"{outcome.problem}{detail}")
            failed_runs += bool(failed)
            total += 1
        runs_text = " ".join(f"{s:.2f}" for s in seconds)
        verdict = "all passed" if not failures else f"FAILED: {dict(failures)}"
        print(f"{name:12} median {statistics.median(seconds):.2f} s  (runs: {runs_text})"
              f"  {len(report.outcomes)} scenarios, {verdict}", flush=True)
        for scenario, problem in problems.items():
            print(f"{'':12} {scenario}: {problem}", flush=True)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load}")
    print(f"failed runs: {failed_runs} of {total}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0,
                        help="busy processes per CPU beside the checks (default 0)")
    parser.add_argument("--kits", nargs="*", metavar="LANG",
                        help="the starter kits instead of the sample bots (all, or these)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="taki-check-speed-") as scratch:
        bots = BOTS
        if args.kits is not None:
            unknown = set(args.kits) - set(kit_names())
            if unknown:
                raise SystemExit(f"no starter kit for {', '.join(sorted(unknown))}")
            bots = built_kits(args.kits or kit_names(), Path(scratch))
        print(f"load average at the start: {os.getloadavg()[0]:.2f}", flush=True)
        with busy(args.busy * (os.cpu_count() or 1)):
            trio.run(measure, bots, args.runs)


if __name__ == "__main__":
    main()
