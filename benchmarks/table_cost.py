"""The matchmaking's cost per table at a large field, this tree against an anchor commit
in one run (alternating, so both see the same load).

A field of ``--bots`` rated bots (Elo uniform over 3 Elo per bot, one standard deviation
uniform in ``--sigma`` LOW HIGH, every bot past its placement, each with its own wait)
chooses tables of each size of ``--sizes`` with
``referee.competition.matchmaking.choose_table``, as the ladder calls it. Run from the
repository root::

    python benchmarks/table_cost.py [--bots 1000] [--anchor COMMIT] [--rounds 15]

It prints the load average, the median microseconds per table of each version at each
size, and last ``table T us``: this tree's median at the first size.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from types import ModuleType

from anchor import checked_out

import referee.competition.matchmaking as this
from referee.ratings.online import Belief


def loaded(where: Path) -> ModuleType:
    """The matchmaking module of the checkout at ``where``."""
    spec = importlib.util.spec_from_file_location(
        "anchor_matchmaking", where / "referee" / "competition" / "matchmaking.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cost(module: ModuleType, field: list[tuple[str, Belief, int]], size: int, seed: int,
         tables: int = 5) -> float:
    """Microseconds per table of ``module``'s choose_table on ``field``."""
    entrants = [module.Entrant(name, belief, belief.games, idle) for name, belief, idle in field]
    rng = random.Random(seed)
    began = time.perf_counter()
    for _ in range(tables):
        module.choose_table(entrants, size, rng, placement_games=10)
    return (time.perf_counter() - began) / tables * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--sigma", type=float, nargs=2, default=[15.0, 40.0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--anchor", help="a commit whose matchmaking runs beside this one")
    args = parser.parse_args()
    rng = random.Random(0)
    field = [(f"bot{i}", Belief(rng.uniform(0.0, 3.0 * args.bots), rng.uniform(*args.sigma),
                                200), i) for i in range(args.bots)]
    with contextlib.ExitStack() as stack:
        versions: dict[str, ModuleType] = {"this": this}
        if args.anchor:
            where = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "anchor"
            stack.enter_context(checked_out(args.anchor, where))
            versions[args.anchor[:7]] = loaded(where)
        spent: dict[tuple[str, int], list[float]] = {}
        for seed in range(args.rounds):
            for name, module in versions.items():
                for size in args.sizes:
                    spent.setdefault((name, size), []).append(cost(module, field, size, seed))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.bots} bots,"
          f" medians of {args.rounds} rounds")
    for (name, size), values in spent.items():
        print(f"{name:>8} {size}-player: {statistics.median(values):.0f} us per table")
    print(f"table {statistics.median(spent[('this', args.sizes[0])]):.0f} us")


if __name__ == "__main__":
    main()
