"""The ladder's log trim (``referee.competition.log_budget.trim_logs``) on a folder of
``--files`` logs of ``--bots`` bots, this tree against an anchor commit's, in one run.

The server trims its bots' logs to their budget every 10 s in a thread of its own
process, whose interpreter its event loop shares: a pass's CPU time is time the pages
wait for. Each round times one pass of each version (alternating which goes first)
on the same folder, within budget (nothing evicted, so every pass sees every file), and
the last line is the medians of the CPU time of a pass.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.competition.log_budget import LogBudget, trim_logs

REPO = Path(__file__).resolve().parent.parent


def anchor_trim(commit: str) -> Callable[..., Any]:
    """``trim_logs`` as the module was at ``commit`` (it imports this tree's names)."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{commit}:referee/competition/log_budget.py"],
        check=True, capture_output=True, text=True).stdout
    module = types.ModuleType(f"log_budget_{commit}")
    exec(compile(source, f"{commit}:log_budget.py", "exec"), module.__dict__)
    trim: Callable[..., Any] = module.trim_logs
    return trim


def one_pass(trim: Callable[..., Any], folder: Path, bots: list[str]) -> float:
    began = time.process_time()
    trim(folder, bots, LogBudget(per_bot=1 << 40, total=1 << 50))
    return time.process_time() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--anchor", default="68deb41", metavar="COMMIT")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average"
          f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    versions = {"anchor": anchor_trim(args.anchor), "this": trim_logs}
    bots = [f"b{i:05d}@1" for i in range(args.bots)]
    spent: dict[str, list[float]] = {name: [] for name in versions}
    with tempfile.TemporaryDirectory(prefix="log-trim-") as where:
        folder = Path(where)
        for i in range(args.files):  # as the ladder names them: <unit>-<bot>[.<n>].log
            (folder / f"t{i}_deals0-0_rot0-b{i % args.bots:05d}_1.log").write_bytes(b"x" * 100)
        for round_ in range(args.rounds):
            order = list(versions) if round_ % 2 == 0 else list(reversed(versions))
            for name in order:
                spent[name].append(one_pass(versions[name], folder, bots))
            print(f"round {round_ + 1}: " + ", ".join(
                f"{name} {spent[name][-1] * 1000:.1f} ms" for name in versions)
                + f"; load average {os.getloadavg()[0]:.2f}", flush=True)
    anchor, this = (statistics.median(spent[name]) for name in versions)
    print(f"log trim at {args.bots} bots, {args.files} files, CPU a pass (medians):"
          f" anchor {args.anchor} {anchor * 1000:.1f} ms, this tree {this * 1000:.1f} ms")


if __name__ == "__main__":
    main()
