"""A season at scale: ``taki-referee serve`` on a competition database of ``--bots`` bots
(default 1,000) and ``--games`` stored games (default 1,000,000), measured in one run.

The database is synthetic but valid: every bot is a participant's active submission
(the random bot, in a folder of its own), every game a real row of the ladder's tables
(its meeting, seats with places, forfeits now and then with their reasons, answer times),
the games' winners drawn from hidden strengths, one bot (the first) in 10,000 games, and a
sample of games with a replay file. It is built with ``executemany`` in one transaction
and its aggregates folded once (``referee.competition.aggregates``, as the ladder folds
them while it plays); the built file is kept in ``--cache`` (by bots and games), so a
second run starts at once, each run on a copy of it.

Measured, in this order:

* ``ratings`` and ``report`` on the database (s);
* the matchmaking's cost per table at ``--bots`` active bots, as the ladder chooses
  (``referee.competition.matchmaking.choose_table`` on the restored ratings) (us);
* ``serve``: from its start to its first answer of the leaderboard (s), and its RSS
  then (MiB);
* ``--minutes`` of ladder play (default 10) with ``--viewers`` viewers (default 50) in
  ``--client-processes`` processes (default 5; ``season_viewers``), each loading a page,
  waiting about ``--think`` s and loading another: the leaderboard and its rows, the
  pages of the bot with 10,000 games (its first and later game pages), game pages across
  the season and a participant's own page (signed in); and, as often as one viewer, a
  path no page has (a 404: the floor of a request through the same HTTP server and
  event loop). Page latency p50/p95/max by kind; where it went, by kind: the time before
  the application had the request, the handler's parts from the pages'
  ``Server-Timing`` (the wait for a worker thread, the queries, the values, the
  template) and the time after (``serve --timing`` stamps each answer with its
  arrival), with how each page was found (kept or rendered); the lag of the clients'
  own loops; the server's event loop every 30 s (its lag, busy share and slowest
  steps); the games stored a minute and the CPUs the server's own process kept busy;
  the server's RSS every 30 s and at the end, and its growth per stored game.

The viewers are many clients of the field but all come from 127.0.0.1 here, so the
competition file raises the rate limit of an anonymous address above what they ask
together. With ``--anchor COMMIT`` the serve of that commit's referee (checked out
beside this one) is measured too, in periods of ``--minutes`` alternating with this
tree's (anchor, this, this, anchor, ... for ``--rounds`` rounds) on the same database,
so both see the same load on average; both are printed, this tree's last.

Last line: ``season N bots M games: start S s; rss R MiB; p95 P ms; table T us`` (the RSS
after the ladder's play). Run from the repository root (bubblewrap installed, as for any
competition)::

    .venv/bin/python benchmarks/season.py [--bots 1000] [--games 1000000] [--minutes 10]
                                          [--anchor COMMIT --rounds 2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import psutil
import trio
from anchor import checked_out
from season_viewers import gathered, merged, parts, percentile, start_viewers

from referee.competition import CompetitionStore, Season
from referee.competition.matchmaking import Entrant, choose_table
from referee.competition.tokens import digest, new_token
from referee.core.replay import Replay
from referee.match.game import replay_path
from referee.ratings import Belief
from referee.rules import Rules

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
TAKI = str(Path(sys.executable).with_name("taki-referee"))
#: The viewers are many clients of the field, but all from 127.0.0.1 here: the rate
#: limit of an anonymous address is raised above what they ask together.
COMPETITION = """\
[competition]
name = "season"
requests_per_second = 1000
request_burst = 1000

[ladder]
deals = 1
concurrency = 2
placement_games = 10

[time]
move_ms = 1000
startup_ms = 15000
"""
#: Games of the first bot (the bot page measured).
BIG_BOT_GAMES = 10_000
#: Games with a replay file.
REPLAYS = 200
#: Answer times kept per seat (a real game has a few dozen).
TIMES_PER_SEAT = 10
CHUNK = 50_000
FORFEITS = ("timeout", "crash", "protocol", "illegal")


def bot_name(i: int) -> str:
    return f"b{i:05d}@1"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# ------------------------------------------------------------------- building


def build(db: Path, bots: int, games: int, seed: int = 7) -> dict[str, str]:
    """Write the synthetic competition at ``db`` (its files beside it); the tokens of
    the first participant."""
    CompetitionStore(db).close()  # every table, marked
    files = db.with_name(f"{db.stem}-files")
    rng = random.Random(seed)
    tokens = {}
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.execute("BEGIN")
    people, owners, subs = [], [], []
    for i in range(bots):
        token = new_token()
        if i == 0:
            tokens["participant"] = token
        people.append((f"p{i:05d}", digest(token)))
        owners.append((f"b{i:05d}", f"p{i:05d}"))
        subs.append((f"p{i:05d}", f"b{i:05d}", f"python random_bot.py {i}", "active", 1,
                     f"sub{i:05d}", "2026-01-01T00:00:00.000000Z"))
        source = files / "uploads" / f"sub{i:05d}" / "source"
        source.mkdir(parents=True, exist_ok=True)
        shutil.copy(RANDOM_BOT, source / "random_bot.py")
        (source / "bot.toml").write_text(
            f'name = "b{i:05d}"\ncommand = "python random_bot.py {i}"\n')
    con.executemany("INSERT INTO participants(name, token_sha256) VALUES (?, ?)", people)
    con.executemany("INSERT INTO bot_owners(bot, participant) VALUES (?, ?)", owners)
    con.executemany("INSERT INTO submissions(participant, bot, command, status, version,"
                    " folder, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)", subs)
    strength = [rng.gauss(0.0, 200.0) for _ in range(bots)]
    speed = [rng.uniform(0.5, 60.0) for _ in range(bots)]
    deals: dict[tuple[int, int], int] = defaultdict(int)
    meetings = games // 2
    big_share = BIG_BOT_GAMES / 2 / max(meetings, 1)
    replay_every = max(1, meetings // REPLAYS)
    rows: dict[str, list[Any]] = defaultdict(list)
    for m in range(meetings):
        if rng.random() < big_share:
            a, b = 0, rng.randrange(1, bots)
        else:
            a, b = rng.sample(range(1, bots), 2)
        a, b = min(a, b), max(a, b)
        deal = deals[(a, b)]
        deals[(a, b)] += 1
        table = f"{bot_name(a)},{bot_name(b)}"
        rows["meetings"].append((f"{table}/deals{deal}-{deal}",
                                 json.dumps([bot_name(a), bot_name(b)]), deal, 1, 1))
        for rot, seats in enumerate(((a, b), (b, a))):
            game_id = f"{table}/deal{deal}/rot{rot}"
            _game_rows(rows, rng, game_id, f"{table}/deal{deal}", seats, strength, speed,
                       files if m % replay_every == 0 and rot == 0 else None)
        if len(rows["games"]) >= CHUNK:
            _flush(con, rows)
    _flush(con, rows)
    con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('seed', '7')")
    con.execute("COMMIT")
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    return tokens


def _game_rows(rows: dict[str, list[Any]], rng: random.Random, game_id: str, block: str,
               seats: tuple[int, int], strength: list[float], speed: list[float],
               files: Path | None) -> None:
    a, b = seats
    first_wins = rng.random() < 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
    places = (1, 2) if first_wins else (2, 1)
    replay = None
    if files is not None:
        path = replay_path(files / "replays", game_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        Replay(game_id, rng.randrange(1 << 62), Rules(),
               [bot_name(a), bot_name(b)]).save(path)
        replay = str(path)
    rows["games"].append((game_id, block, rng.randrange(1 << 62), rng.randint(20, 200), "win",
                          replay))
    for seat, (bot, place) in enumerate(zip(seats, places, strict=True)):
        forfeit = rng.choice(FORFEITS) if place == 2 and rng.random() < 0.02 else None
        detail = f"{forfeit}: synthetic\nstderr line" if forfeit else None
        rows["seats"].append((game_id, seat, bot_name(bot), place, 0, forfeit, detail))
        times = [round(rng.expovariate(1 / speed[bot]), 1) for _ in range(TIMES_PER_SEAT)]
        rows["times"].append((game_id, seat, json.dumps(times), 0))


def _flush(con: sqlite3.Connection, rows: dict[str, list[Any]]) -> None:
    con.executemany("INSERT INTO meetings(name, bots, first_deal, deals, finished)"
                    " VALUES (?, ?, ?, ?, ?)", rows["meetings"])
    con.executemany("INSERT INTO games(game_id, block, seed, actions, reason, replay)"
                    " VALUES (?, ?, ?, ?, ?, ?)", rows["games"])
    con.executemany("INSERT INTO seats(game_id, seat, bot, place, points, forfeit_reason,"
                    " forfeit_detail) VALUES (?, ?, ?, ?, ?, ?, ?)", rows["seats"])
    con.executemany("INSERT INTO seat_times(game_id, seat, times_ms, near_misses)"
                    " VALUES (?, ?, ?, ?)", rows["times"])
    rows.clear()


def cached(args: argparse.Namespace) -> tuple[Path, dict[str, str]]:
    """The built database of the cache (built now when missing) and its tokens."""
    folder = Path(args.cache)
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"season-{args.bots}-{args.games}.sqlite"
    tokens_file = db.with_suffix(".tokens.json")
    if not tokens_file.exists():  # a database half built is built again
        for stale in (db, db.with_name(f"{db.stem}-files")):
            if stale.is_dir():
                shutil.rmtree(stale)
            elif stale.exists():
                stale.unlink()
        began = time.perf_counter()
        tokens_file.write_text(json.dumps(build(db, args.bots, args.games)))
        print(f"built {db} in {time.perf_counter() - began:.0f} s", flush=True)
    # Its aggregates, folded once (resumed where a run stopped): what the ladder does
    # game by game as it plays.
    began = time.perf_counter()
    with Season(db) as season:
        folded = season.fold()
    took = time.perf_counter() - began
    if folded.games:
        print(f"its aggregates folded: {folded.games} games in {took:.0f} s"
              f" ({folded.games / max(took, 1e-9):.0f} games/s)", flush=True)
    print(f"database {db}: {db.stat().st_size / 2 ** 20:.0f} MiB", flush=True)
    return db, json.loads(tokens_file.read_text())


def copy_of(db: Path, into: Path) -> Path:
    target = into / "competition.sqlite"
    shutil.copy(db, target)
    shutil.copytree(db.with_name(f"{db.stem}-files"), into / "competition-files",
                    symlinks=True)
    return target


# ------------------------------------------------------------------- measuring


def timed_cli(args: list[str], cwd: Path, limit: float) -> str:
    began = time.perf_counter()
    try:
        done = subprocess.run([TAKI, *args], cwd=cwd, capture_output=True, text=True,
                              timeout=limit)
    except subprocess.TimeoutExpired:
        return f"> {limit:.0f} s (stopped)"
    took = time.perf_counter() - began
    if done.returncode != 0:
        return f"failed after {took:.1f} s: {done.stderr.strip()[-300:]}"
    return f"{took:.1f} s"


def table_cost(db: Path, bots: int, tables: int = 20) -> tuple[float, float]:
    """Microseconds per table of choose_table at ``bots`` active bots on the restored
    ratings, as the ladder calls it (two bots' ratings moved by a game since the last
    table), and of the first table."""
    with Season(db, readonly=True) as season:
        beliefs = season.beliefs()
    rng = random.Random(1)
    field = [Entrant(bot_name(i), beliefs[bot_name(i)], beliefs[bot_name(i)].games, i)
             for i in range(bots) if bot_name(i) in beliefs]
    began = time.perf_counter()
    choose_table(field, 2, rng, placement_games=10)
    first = (time.perf_counter() - began) * 1e6
    spent = 0.0
    for _ in range(tables):
        for i in rng.sample(range(len(field)), 2):  # a game landed
            old = field[i]
            moved = Belief(old.belief.mu + rng.gauss(0, 5), old.belief.sigma * 0.999,
                           old.belief.games + 1)
            field[i] = Entrant(old.name, moved, old.games + 1, 0)
        began = time.perf_counter()
        choose_table(field, 2, rng, placement_games=10)
        spent += time.perf_counter() - began
    return spent / tables * 1e6, first


def rss_mib(pid: int) -> float:
    return float(psutil.Process(pid).memory_info().rss) / 2 ** 20


def stored_games(db: Path) -> int:
    con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(con.execute("SELECT MAX(rowid) FROM games").fetchone()[0] or 0)
    finally:
        con.close()


async def watch(until: float, pid: int, rss: list[tuple[float, float, int]],
                db: Path) -> None:
    """The server's RSS and the games stored, every 30 s until ``until``."""
    began = time.monotonic()
    while time.monotonic() < until:
        await trio.sleep(min(30.0, max(0.0, until - time.monotonic())))
        stored = await trio.to_thread.run_sync(stored_games, db)
        rss.append((time.monotonic() - began, rss_mib(pid), stored))
        print(f"  {rss[-1][0]:5.0f} s: rss {rss[-1][1]:.1f} MiB, {stored} games stored,"
              f" load {load()}", flush=True)


#: The server's figures of its event loop (``serve --timing``).
LOOP_LINE = re.compile(r"(?:event loop|threads), last .*")


def serve(where: Path, db: Path, tokens: dict[str, str], args: argparse.Namespace,
          tree: Path | None = None) -> dict[str, Any]:
    """``--minutes`` of serve with the viewers; with ``tree``, the referee of that
    checkout (an anchor commit's) rather than this one."""
    (where / "competition.toml").write_text(COMPETITION.replace(
        "[ladder]\n", f"[ladder]\nworkers = {args.workers}\n"))
    out = where / "serve.out"
    env = dict(os.environ)
    if tree is not None:  # its package first on the path (before this editable install)
        env["PYTHONPATH"] = str(tree)
    began = time.monotonic()
    with out.open("w") as output:
        process = subprocess.Popen(
            [TAKI, "serve", "competition.toml", "--db", db.name, "--listen", "127.0.0.1:0",
             *(["--timing"] if tree is None and args.timing else [])],
            cwd=where, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
            env=env)
    try:
        url = ""
        while process.poll() is None and time.monotonic() - began < 600:
            found = re.search(r"serving on (http://\S+)", out.read_text())
            if found:
                url = found.group(1)
                try:
                    if httpx.get(f"{url}/", timeout=60).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
            time.sleep(0.05)
        if not url:
            raise SystemExit("serve did not start:\n" + out.read_text()[-2000:])
        start_s = time.monotonic() - began
        figures: dict[str, Any] = {"start": start_s, "rss_start": rss_mib(process.pid)}
        print(f"serve: first answer after {start_s:.1f} s; rss {figures['rss_start']:.0f} MiB",
              flush=True)
        games = stored_games(db)
        rss: list[tuple[float, float, int]] = []
        cpu = psutil.Process(process.pid).cpu_times()
        watched = time.monotonic()
        until = watched + args.minutes * 60
        big = bot_name(0)
        public = ["/", "/live/board", "/live/board", f"/bots/{big}", f"/bots/{big}?page=7",
                  f"/bots/{big}?result=forfeit", "/games/N", "/games/N", "/games/N"]
        viewers = start_viewers(url, tokens["participant"], public, games, args.viewers,
                                args.client_processes, args.think, until)
        trio.run(watch, until, process.pid, rss, db)
        results = viewers.get(timeout=args.minutes * 60 + 300)
        after = psutil.Process(process.pid).cpu_times()
        # The server's own CPU (its threads, not the bots' processes), in CPUs.
        busy = (after.user + after.system - cpu.user - cpu.system) / (
            time.monotonic() - watched)
        figures.update(gathered(results), rss=rss, games=games, cpu=busy,
                       loop=LOOP_LINE.findall(out.read_text()))
        return figures
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=120)


def report(figures: dict[str, Any], args: argparse.Namespace) -> tuple[float, float]:
    seen: dict[str, list[float]] = figures["seen"]
    print(f"\n{'page':28} {'loads':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for kind, times in sorted(seen.items()):
        print(f"{kind:28} {len(times):6d} {statistics.median(times):8.1f}"
              f" {percentile(times, 0.95):8.1f} {max(times):8.1f}")
    every = [t for kind, times in seen.items() if " " not in kind for t in times]
    p95 = percentile(every, 0.95) if every else math.nan
    print(f"{'every page':28} {len(every):6d} {statistics.median(every):8.1f} {p95:8.1f}"
          f" {max(every):8.1f}")
    parts(figures["server"], figures["client_lags"])
    for line in figures["loop"]:
        print(f"the server's {line}")
    rss = figures["rss"]
    played = rss[-1][2] - figures["games"] if rss else 0
    where = (f"in {args.workers} worker processes" if args.workers
             else "in the server's process")
    print(f"ladder ({where}): {played} games in {args.minutes:g} min"
          f" ({played / args.minutes:.1f} games/min); the server's process busy"
          f" {figures['cpu']:.2f} CPUs")
    end = rss[-1][1] if rss else figures["rss_start"]
    if len(rss) >= 3 and rss[-1][2] > rss[0][2]:
        # The least-squares slope of RSS over the games stored, from the first sample on
        # (the first 30 s fill the caches and the pools).
        games = [float(g) for _, _, g in rss]
        mib = [m for _, m, _ in rss]
        slope = statistics.linear_regression(games, mib).slope if len(set(games)) > 1 else 0.0
        print(f"rss from {rss[0][1]:.1f} to {rss[-1][1]:.1f} MiB over {rss[-1][2] - rss[0][2]}"
              f" games stored: {slope * 2 ** 20:.0f} bytes per stored game (least squares"
              f" over {len(rss)} samples)")
    return p95, end


def alternating(where: Path, db: Path, tokens: dict[str, str], args: argparse.Namespace
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``--rounds`` periods of this tree's serve and as many of the anchor's, in the
    order anchor, this, this, anchor, ... (so both see the same load on average): the
    figures of this tree and of the anchor, each over its periods."""
    with tempfile.TemporaryDirectory(prefix="season-anchor-") as folder, \
            checked_out(args.anchor, Path(folder) / "anchor") as tree:
        runs: dict[str, list[dict[str, Any]]] = {"this": [], "anchor": []}
        for round_ in range(args.rounds):
            for name in ("anchor", "this") if round_ % 2 == 0 else ("this", "anchor"):
                print(f"--- {name}, period {round_ + 1}, load average {load()}", flush=True)
                runs[name].append(serve(where, db, tokens, args,
                                        tree if name == "anchor" else None))
    return merged(runs["this"]), merged(runs["anchor"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--minutes", type=float, default=10.0, help="of ladder play")
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--think", type=float, default=1.0)
    parser.add_argument("--client-processes", type=int, default=5,
                        help="the viewers run in this many processes (each its own loop)")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "taki-season"))
    parser.add_argument("--cli-limit", type=float, default=600.0,
                        help="stop ratings and report after this many seconds")
    parser.add_argument("--workers", type=int, default=0,
                        help="the ladder's referee worker processes ([ladder] workers;"
                             " 0: the games are played in the server's process)")
    parser.add_argument("--no-timing", dest="timing", action="store_false",
                        help="serve this tree without --timing (as an anchor is served):"
                             " no split of the time before and after the application")
    parser.add_argument("--pages-only", action="store_true",
                        help="skip ratings and report (the serve's figures alone)")
    parser.add_argument("--anchor", metavar="COMMIT",
                        help="serve this commit's referee too, in periods alternating with"
                             " this tree's (anchor first), on the same database")
    parser.add_argument("--rounds", type=int, default=1,
                        help="periods of --minutes of each version, with --anchor")
    args = parser.parse_args()
    if args.bots < 3 or args.games < 2:
        raise SystemExit("--bots: at least 3; --games: at least 2")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load()}",
          flush=True)
    db, tokens = cached(args)
    with tempfile.TemporaryDirectory(prefix="season-") as folder:
        where = Path(folder)
        work = copy_of(db, where)
        if not args.pages_only:
            print(f"ratings: {timed_cli(['ratings', work.name], where, args.cli_limit)}",
                  flush=True)
            made = timed_cli(["report", work.name, "-o", "r.html"], where, args.cli_limit)
            print(f"report: {made}", flush=True)
        table, alone = table_cost(work, args.bots)
        print(f"matchmaking at {args.bots} bots: {table:.0f} us per table (two ratings"
              f" moved since the last table); {alone:.0f} us the first", flush=True)
        if args.anchor:
            figures, theirs = alternating(where, work, tokens, args)
            print(f"\n=== the anchor, {args.anchor}")
            anchor_p95, _ = report(theirs, args)
            print("\n=== this tree")
        else:
            figures = serve(where, work, tokens, args)
        p95, rss = report(figures, args)
    print(f"load average {load()}")
    if args.anchor:
        print(f"anchor {args.anchor}: start {theirs['start']:.1f} s; p95 {anchor_p95:.0f} ms")
    print(f"season {args.bots} bots {args.games} games: start {figures['start']:.1f} s;"
          f" rss {rss:.0f} MiB; p95 {p95:.0f} ms; table {table:.0f} us")


if __name__ == "__main__":
    main()
