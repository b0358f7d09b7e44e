"""The ladder's games per minute: played in its own process against played on a Dask
LocalCluster of ``--workers`` worker processes (default 2), alternating in one run.

Each period runs ``referee.competition.ladder.run_ladder`` for ``--seconds`` on a fresh
database with ``--bots`` random sample bots (two per table, one deal per meeting),
either with the local executor (``--concurrency`` games at once, default 2) or with
``dask = "HOST:PORT"`` of a LocalCluster started once for the run (each worker one
thread: one game at a time per worker process). The periods alternate (local, Dask,
Dask, local, ...) ``--rounds`` times each, so a drift of the machine's load hits both.
Prints the games per minute of every period, their medians and the load average, and
last ``ladder games/min: local L; dask D (N workers)``.

    .venv/bin/python benchmarks/dask_ladder.py [--seconds 60] [--rounds 2] [--workers 2]

Needs the dask extra (``./tasks test`` installs it).
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

import trio

from referee.competition import LadderControl, LadderSettings, run_ladder
from referee.core.specs import BotCommand, BotSpec
from referee.league.store import ResultStore

REPO = Path(__file__).resolve().parent.parent
CLUSTER = """\
import sys
from distributed import LocalCluster

with LocalCluster(dashboard_address=":0", n_workers={workers}, threads_per_worker=1,
                  processes=True, host="127.0.0.1") as cluster:
    print(cluster.scheduler_address, flush=True)
    sys.stdin.read()
"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def period(db: Path, settings: LadderSettings, bots: list[BotSpec],
                 seconds: float) -> float:
    """Games per minute of one period of ladder play (the games in flight at its end
    are not counted)."""
    control = LadderControl(bots)
    with ResultStore(db) as store:
        async with trio.open_nursery() as nursery:
            await nursery.start(run_ladder, store, settings, control)
            began, first = time.monotonic(), store.game_count()
            await trio.sleep(seconds)
            games = store.game_count() - first
            took = time.monotonic() - began
            nursery.cancel_scope.cancel()
    return games / took * 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--bots", type=int, default=6)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load()}",
          flush=True)
    script = REPO / "sample_bots" / "random_bot.py"
    bots = [BotSpec(f"r{i}@1", BotCommand([sys.executable, str(script), str(i)]))
            for i in range(args.bots)]
    cluster = subprocess.Popen([sys.executable, "-c", CLUSTER.format(workers=args.workers)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    assert cluster.stdin is not None and cluster.stdout is not None
    try:
        address = cluster.stdout.readline().decode().strip().removeprefix("tcp://")
        if not address:
            raise SystemExit("the Dask cluster did not start (is the dask extra installed?)")
        local = LadderSettings(deals=1, placement_games=2, concurrency=args.concurrency,
                               seed=1)
        dask = LadderSettings(deals=1, placement_games=2, concurrency=args.concurrency,
                              seed=1, dask=address)
        seen: dict[str, list[float]] = {"local": [], "dask": []}
        with tempfile.TemporaryDirectory(prefix="dask-ladder-") as folder:
            for round_ in range(args.rounds):
                order = ("local", "dask") if round_ % 2 == 0 else ("dask", "local")
                for kind in order:
                    db = Path(folder) / f"{kind}{round_}.sqlite"
                    rate = trio.run(period, db, local if kind == "local" else dask, bots,
                                    args.seconds)
                    seen[kind].append(rate)
                    print(f"round {round_ + 1} {kind:5}: {rate:6.1f} games/min;"
                          f" load average {load()}", flush=True)
    finally:
        cluster.stdin.close()
        cluster.wait(timeout=60)
    median = {kind: statistics.median(rates) for kind, rates in seen.items()}
    print(f"medians over {args.rounds} periods of {args.seconds:.0f} s: local"
          f" {median['local']:.1f}, dask {median['dask']:.1f} games/min; load average {load()}")
    print(f"ladder games/min: local {median['local']:.1f}; dask {median['dask']:.1f}"
          f" ({args.workers} workers)")


if __name__ == "__main__":
    main()
