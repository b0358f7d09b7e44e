"""A pondering hog against three honest bots: can a bot win by slowing the others?

``tests/hostile_bots/pondering_hog.py`` keeps busy children that it stops while it is
asked anything and starts again once it has answered: its opponents think beside its
busy loops. Four-player games (``taki-referee match --sandbox``), the hog against three
``sample_bots/random_bot.py``, ``--move-ms`` per decision and reaction, beside
``--busy`` busy processes per CPU (other users' jobs, each in a session of its own).

Three arms, alternating in ``--rounds`` rounds in one run: ``defaults`` (this tree's
defaults), ``wall`` (this tree with ``--time-basis wall``) and ``baseline`` (the referee
of ``--baseline``, checked out beside the tree, with its defaults). Each run
prints the hog's wins, the opponents' forfeits (by reason) and the load average. The
last line is the defaults' sum: ``hog wins W of G; opponents' forfeits F``. The goal:
W at most its fair share (G/4 + 1), F = 0.

    .venv/bin/python benchmarks/hog.py [--games 8] [--rounds 2] [--busy 4] [--move-ms 50]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from anchor import checked_out
from overload import busy

REPO = Path(__file__).resolve().parent.parent
HOG = REPO / "tests" / "hostile_bots" / "pondering_hog.py"
RANDOM = REPO / "sample_bots" / "random_bot.py"


def run(tree: Path, folder: Path, games: int, seed: int, move_ms: int, basis: str | None,
        ) -> tuple[int, int, collections.Counter[str]]:
    """Games played by the referee of ``tree``, the hog's wins and its opponents'
    forfeits by reason."""
    command = [sys.executable, "-m", "referee.cli", "match", "--sandbox", "--json",
               "--games", str(games), "--seed", str(seed), "--move-ms", str(move_ms),
               "--reaction-ms", str(move_ms), "--log-dir", str(folder / "logs"),
               f"hog=python {HOG}",
               *(f"r{i}=python {RANDOM} {i}" for i in (1, 2, 3))]
    if basis is not None:
        command[5:5] = ["--time-basis", basis]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "protocol")])}
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                          check=True)
    result = json.loads(done.stdout)
    played = wins = 0
    forfeits: collections.Counter[str] = collections.Counter()
    for game in result["games"]:
        if game["voided"]:
            continue
        played += 1
        for player in game["players"]:
            if player["bot"] == "hog":
                wins += player["place"] == 1
            elif player["forfeit"] is not None:
                forfeits[player["forfeit"]["reason"]] += 1
    return played, wins, forfeits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8, help="games a run (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each arm (default 2)")
    parser.add_argument("--busy", type=int, default=4,
                        help="busy processes per CPU beside the games (default 4)")
    parser.add_argument("--move-ms", type=int, default=50)
    parser.add_argument("--baseline", default="main")
    args = parser.parse_args()
    cpus = os.cpu_count() or 1
    totals = {arm: [0, 0, 0] for arm in ("defaults", "wall", "baseline")}
    print(f"{cpus} CPUs; {args.busy} busy processes per CPU; {args.games} games a run;"
          f" {args.move_ms} ms a request; baseline {args.baseline}")
    with tempfile.TemporaryDirectory() as tmp, \
            checked_out(args.baseline, Path(tmp) / "baseline") as baseline, \
            busy(args.busy * cpus):
        for round_ in range(args.rounds):
            arms = [("defaults", REPO, None), ("wall", REPO, "wall"),
                    ("baseline", baseline, None)]
            for arm, tree, basis in arms if round_ % 2 == 0 else arms[::-1]:
                played, wins, forfeits = run(tree, Path(tmp), args.games, 100 + round_,
                                             args.move_ms, basis)
                total = totals[arm]
                total[0] += played
                total[1] += wins
                total[2] += sum(forfeits.values())
                load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
                print(f"round {round_ + 1} {arm:8}: hog wins {wins} of {played};"
                      f" opponents' forfeits {dict(forfeits) or 0}; load average {load}",
                      flush=True)
    for arm in ("baseline", "wall"):
        games, wins, forfeits = totals[arm]
        print(f"{arm}: hog wins {wins} of {games}; opponents' forfeits {forfeits}")
    games, wins, forfeits = totals["defaults"]
    print(f"hog wins {wins} of {games}; opponents' forfeits {forfeits}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
