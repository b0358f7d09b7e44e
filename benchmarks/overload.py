"""Fair time limits on a crowded machine: leagues beside 0, 2, 4 and 8 busy processes
per CPU, this tree against a baseline commit (default ``main``) in the same run.

Each league seats three bots of ``benchmarks/bots/cpu_share_bot.py``, which spend a
fixed share of every request's limit on the CPU: ``cpu50`` (50%) and ``cpu80`` (80%)
are always in time, ``cpu150`` (150%) overruns at its first request of every game.
Two bots a table, ``--deals`` deals (six games a deal), ``--move-ms`` per decision and
reaction, short hands (``hand_size = 4``), concurrency 2. Beside each league run
``--loads`` busy processes per CPU (``while True: pass``, each in a session of its
own, as other users' jobs would be).

- ``baseline``: the referee of ``--baseline`` (checked out into a temporary worktree),
  which measures wall time;
- ``current``: this tree with its defaults (``--current-basis`` names a basis instead).

The two alternate at each load (which goes first swaps). For each run it prints the
games stored, the timeouts stored of ``cpu50`` and ``cpu80``, the overruns of
``cpu150`` caught (its games that it lost by a timeout, of its games stored), the
plays voided by infrastructure faults and the games voided every time, the wall time
and the load average. The last lines sum up each tree over all loads, the last one this
tree's: ``in-time forfeits: N (cpu50 A, cpu80 B); overruns caught: K of M; voided: P%``
(P: voided plays of all plays). The goal is N = 0, K = M and P under 5.

    .venv/bin/python benchmarks/overload.py [--deals 4] [--loads 0,2,4,8] [--baseline main]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
from anchor import checked_out

REPO = Path(__file__).resolve().parent.parent
BOT = REPO / "benchmarks" / "bots" / "cpu_share_bot.py"
SHARES = {"cpu50": 0.5, "cpu80": 0.8, "cpu150": 1.5}


@attrs.define
class Figures:
    games: int = 0
    timeouts50: int = 0
    timeouts80: int = 0
    caught: int = 0
    overrun_games: int = 0
    void_plays: int = 0
    voided_games: int = 0

    def add(self, other: Figures) -> None:
        for field in attrs.fields(Figures):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    @property
    def voided_share(self) -> float:
        plays = self.games + self.void_plays
        return 100 * self.void_plays / plays if plays else 0.0

    def summary(self) -> str:
        return (f"in-time forfeits: {self.timeouts50 + self.timeouts80} (cpu50"
                f" {self.timeouts50}, cpu80 {self.timeouts80}); overruns caught: {self.caught}"
                f" of {self.overrun_games}; voided: {self.voided_share:.1f}%")


def league_file(folder: Path, kind: str, deals: int, move_ms: int, basis: str | None) -> Path:
    basis_line = f'time_basis = "{basis}"\n' if basis else ""
    bots = "".join(f'\n[[bots]]\nname = "{name}"\ncommand = "python {BOT} {share}"\n'
                   for name, share in SHARES.items())
    path = folder / f"league-{kind}.toml"
    path.write_text(f"""\
[league]
table_size = 2
deals = {deals}
seed = 7
concurrency = 2

[rules]
hand_size = 4

[time]
move_ms = {move_ms}
reaction_ms = {move_ms}
startup_ms = 60000
{basis_line}{bots}""")
    return path


def read_figures(db: Path) -> Figures:
    con = sqlite3.connect(db)
    try:
        tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master")}
        figures = Figures(games=con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        for bot, reason, count in con.execute(
                "SELECT bot, forfeit_reason, COUNT(*) FROM seats GROUP BY bot, forfeit_reason"):
            if reason == "timeout":
                figures.timeouts50 += count if bot == "cpu50" else 0
                figures.timeouts80 += count if bot == "cpu80" else 0
                figures.caught += count if bot == "cpu150" else 0
        # cpu150 overran in every game where it was asked anything: it lost by a timeout,
        # or it has answer times (a game its opponent lost before its first request is
        # not counted).
        figures.overrun_games = con.execute(
            "SELECT COUNT(*) FROM seats LEFT JOIN seat_times USING (game_id, seat)"
            " WHERE bot = 'cpu150' AND (forfeit_reason = 'timeout'"
            " OR COALESCE(times_ms, '[]') != '[]')").fetchone()[0]
        if "infra_events" in tables:
            figures.void_plays = con.execute("SELECT COUNT(*) FROM infra_events").fetchone()[0]
            figures.voided_games = con.execute(
                "SELECT COUNT(*) FROM voided_games").fetchone()[0]
        return figures
    finally:
        con.close()


def run_league(tree: Path, folder: Path, league: Path) -> tuple[Figures, float]:
    db = folder / f"r{time.monotonic_ns()}.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "protocol")])}
    command = [sys.executable, "-m", "referee.cli", "league", str(league), "--db", str(db),
               "--log-dir", str(folder / "logs"), "--json", "--no-bot-check"]
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=folder, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    took = time.perf_counter() - start
    return read_figures(db), took


@contextlib.contextmanager
def busy(count: int) -> Iterator[None]:
    """``count`` busy processes, each in a session of its own, for the block."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                              start_new_session=True) for _ in range(count)]
    try:
        time.sleep(1.0 if count else 0)
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--loads", default="0,2,4,8",
                        help="busy processes per CPU, comma-separated (default 0,2,4,8)")
    parser.add_argument("--move-ms", type=int, default=30)
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--current-basis", choices=("wall", "cpu"), default=None,
                        help="the time basis of this tree's leagues (default: its default)")
    args = parser.parse_args()
    cpus = os.cpu_count() or 1
    loads = [int(x) for x in args.loads.split(",")]
    totals = {"baseline": Figures(), "current": Figures()}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with checked_out(args.baseline, root / "baseline") as baseline:
            leagues = {
                "baseline": (baseline, league_file(root, "baseline", args.deals, args.move_ms,
                                                   None)),
                "current": (REPO, league_file(root, "current", args.deals, args.move_ms,
                                              args.current_basis)),
            }
            print(f"{cpus} CPUs; {args.deals} deals a league; {args.move_ms} ms a request;"
                  f" baseline {args.baseline} (its default basis), current"
                  f" ({args.current_basis or 'its default'} basis)")
            for index, per_cpu in enumerate(loads):
                order = ["baseline", "current"] if index % 2 == 0 else ["current", "baseline"]
                with busy(per_cpu * cpus):
                    for kind in order:
                        tree, league = leagues[kind]
                        figures, took = run_league(tree, root, league)
                        totals[kind].add(figures)
                        load = os.getloadavg()[0]
                        print(f"load {per_cpu}/cpu {kind:8}: {figures.games} games stored,"
                              f" timeouts cpu50 {figures.timeouts50} cpu80 {figures.timeouts80},"
                              f" overruns caught {figures.caught} of {figures.overrun_games},"
                              f" voided plays {figures.void_plays} (games"
                              f" {figures.voided_games}), {took:.0f} s,"
                              f" loadavg {load:.1f}", flush=True)
    print(f"baseline ({args.baseline}): {totals['baseline'].summary()}")
    print(totals["current"].summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
