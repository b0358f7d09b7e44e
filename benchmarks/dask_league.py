"""League throughput: local concurrency 2 against a 2-worker Dask LocalCluster.

Plays the same league (the greedy sample bot and two seeded random bots, two per table)
twice into fresh databases: once with the local executor at concurrency 2, once through
the Dask executor on a LocalCluster of two worker processes with one thread each. Both
runs write replays and bot logs. Prints games per second of each and a last line
``ratio=X.XX`` (Dask over local).

    .venv/bin/python benchmarks/dask_league.py [--deals 20] [--seed 0]

Needs the dask extra (``pip install -e '.[dask]'``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import attrs
import trio

from referee.config.settings import LeagueConfig, load_league
from referee.league.dask_executor import DaskExecutor
from referee.league.runner import Executor, LocalExecutor, league_size, run_league
from referee.league.store import ResultStore

REPO = Path(__file__).resolve().parent.parent


def write_league(root: Path, deals: int, seed: int) -> Path:
    greedy = REPO / "sample_bots" / "greedy_bot.py"
    rand = REPO / "sample_bots" / "random_bot.py"
    path = root / "league.toml"
    path.write_text(f"""\
[league]
table_size = 2
deals = {deals}
seed = {seed}
replay_dir = "replays"

[[bots]]
name = "greedy"
command = "python {greedy}"

[[bots]]
name = "random1"
command = "python {rand} 1"

[[bots]]
name = "random2"
command = "python {rand} 2"
""")
    return path


def play(config: LeagueConfig, root: Path, name: str, executor: Executor) -> float:
    """Plays the whole league into a fresh database; returns the wall-clock seconds."""
    run_dir = root / name
    run_dir.mkdir()
    config = attrs.evolve(config, match=attrs.evolve(config.match, replay_dir=run_dir / "replays"))
    with ResultStore(run_dir / "results.sqlite") as store:
        started = time.perf_counter()
        played = trio.run(lambda: run_league(config, store, log_dir=run_dir / "logs",
                                             executor=executor))
        elapsed = time.perf_counter() - started
        assert played == store.game_count() == league_size(config), (played, name)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=20, help="deals per table (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from distributed import LocalCluster

    with tempfile.TemporaryDirectory(prefix="taki-dask-bench-") as tmp:
        root = Path(tmp)
        config = load_league(write_league(root, args.deals, args.seed))
        games = league_size(config)
        print(f"python {sys.version.split()[0]}, {games} games "
              f"(3 bots, 2 per table, {args.deals} deals), replays and logs on")

        local_s = play(config, root, "local", LocalExecutor(2))
        local = games / local_s
        print(f"local, concurrency 2          {local:6.1f} games/s  ({local_s:.1f} s)")

        started = time.perf_counter()
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster:
            startup = time.perf_counter() - started
            dask_s = play(config, root, "dask", DaskExecutor(cluster.scheduler_address))
        remote = games / dask_s
        print(f"dask, 2 workers x 1 thread    {remote:6.1f} games/s  ({dask_s:.1f} s;"
              f" cluster start-up {startup:.1f} s not counted)")
    print(f"ratio={remote / local:.2f}")


if __name__ == "__main__":
    main()
