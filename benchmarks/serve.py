"""The pages under load while the ladder plays: 50 page viewers at once and 5 uploads,
against ``taki-referee serve`` on 127.0.0.1, and what that traffic does to the ladder's
time use.

The server runs in a process of its own with four participants' random bots in its
ladder. Quiet periods (the ladder alone) and busy periods (the ladder, ``--viewers``
viewers that each load a page, wait ``--think`` seconds and load another, and one
upload by each of ``--uploads`` participants, each built and checked in the sandbox)
alternate, ``--rounds`` times each, so a drift of the machine's speed hits both alike.
A single viewer loads pages in the quiet periods: the latency of a page on this machine
without the traffic. For each kind of period: the games stored, their decisions, the
bots' mean and p95 answer times, near misses (an answer within 10% of the time the bot
had), timeouts and forfeits; for the busy periods the latency of every page load (p50,
p95, max) by page. The load average is printed at the start and the end.

Its last line is ``p95 N ms``: the 95th percentile of every page load in the busy
periods. Run from the repository root: ``.venv/bin/python benchmarks/serve.py``
(about 3 minutes; bubblewrap must be installed, as for any competition).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import trio

from referee.core.time_use import TimeUse
from referee.league.store import ResultStore

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
TAKI = str(Path(sys.executable).with_name("taki-referee"))
COMPETITION = """\
[competition]
name = "load"

[ladder]
deals = 1
concurrency = 2
placement_games = 4

[time]
move_ms = {move_ms}
startup_ms = 15000

[submissions]
per_day = 100
"""
PLAYERS = ("p1", "p2", "p3", "p4", "p5")


def archive(name: str, seed: int) -> bytes:
    buffer = io.BytesIO()
    files = {"bot.toml": f'name = "{name}"\ncommand = "python random_bot.py {seed}"\n',
             "random_bot.py": RANDOM_BOT.read_text()}
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for file, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(file)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def api(url: str, token: str, body: bytes | None = None) -> Any:
    request = urllib.request.Request(url, data=body, headers={
        "Authorization": f"Bearer {token}"}, method="POST" if body else "GET")
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def wait_active(url: str, token: str, submission: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sub = api(f"{url}/api/submissions/{submission}", token)["submission"]
        if sub["status"] == "active":
            return
        if sub["status"] == "rejected":
            raise SystemExit(f"a benchmark bot was rejected: {sub['output'][-500:]}")
        time.sleep(0.5)
    raise SystemExit("a benchmark bot did not pass its check in time")


def ladder_since(db: Path, after: int) -> tuple[int, list[Any]]:
    games: list[Any] = []
    with ResultStore(db, readonly=True) as store:
        while True:
            after, more = store.games_since(after, 1000)
            if not more:
                return after, games
            games.extend(more)


def time_use(games: list[Any]) -> dict[str, Any]:
    use = TimeUse.merge(s.time for g in games for s in g.seats)
    timeouts = sum(1 for g in games for s in g.seats if s.forfeit_reason == "timeout")
    forfeits = sum(1 for g in games for s in g.seats if s.forfeit_reason is not None)
    return {"games": len(games), "decisions": use.decisions, "mean": use.mean or 0.0,
            "p95": use.p95 or 0.0, "near": use.near_misses, "timeouts": timeouts,
            "forfeits": forfeits}


async def viewer(client: httpx.AsyncClient, pages: list[str], think: float,
                 until: float, seen: dict[str, list[float]], rng: random.Random) -> None:
    while time.monotonic() < until:
        path = rng.choice(pages)
        if path.startswith("/games/"):  # another game of the same range
            path = f"/games/{rng.randint(1, int(path.split('/')[-1]))}"
        kind = re.sub(r"\d+", "N", re.sub(r"/bots/.*", "/bots/B", path))
        began = time.perf_counter()
        try:
            answer = await client.get(path)
        except httpx.HTTPError as exc:
            seen[f"{kind} error {type(exc).__name__}"].append(
                (time.perf_counter() - began) * 1000)
            continue
        took = (time.perf_counter() - began) * 1000
        if answer.status_code not in (200, 304):
            seen[f"{kind} status {answer.status_code}"].append(took)
        else:
            seen[kind].append(took)
        await trio.sleep(rng.uniform(0.5, 1.5) * think)


def upload(url: str, token: str, name: str, seed: int) -> int:
    sub = api(f"{url}/api/submissions", token, archive(name, seed))["submission"]
    return int(sub["id"])


async def busy(url: str, tokens: dict[str, str], args: argparse.Namespace, games: int,
               bots: list[str], seen: dict[str, list[float]], round_: int) -> None:
    rng = random.Random(round_)
    pages = mix(bots, games, rng)
    until = time.monotonic() + args.seconds
    # Connections idle for 2 s are closed before the server's 5 s keep-alive ends.
    limits = httpx.Limits(max_connections=args.viewers, keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client, \
            trio.open_nursery() as nursery:
        for _ in range(args.viewers):
            nursery.start_soon(viewer, client, pages, args.think, until, seen,
                               random.Random(rng.random()))
        for i, name in enumerate(PLAYERS[:args.uploads]):
            await trio.sleep(args.seconds / (2 * args.uploads))
            await trio.to_thread.run_sync(upload, url, tokens[name], f"{name}bot",
                                          100 + round_ * 10 + i)


async def quiet(url: str, args: argparse.Namespace, games: int, bots: list[str],
                seen: dict[str, list[float]], round_: int) -> None:
    """One viewer alone: the pages' latency on this machine without the traffic."""
    rng = random.Random(-round_)
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        await viewer(client, mix(bots, games, rng), args.think,
                     time.monotonic() + args.seconds, seen, rng)


def mix(bots: list[str], games: int, rng: random.Random) -> list[str]:
    """Of every 20 loads: 8 polls of an open leaderboard's rows, 3 leaderboards, 4 bot
    pages, 5 game pages (of the last 200 games)."""
    pages = ["/live/board"] * 8 + ["/"] * 3
    pages += [f"/bots/{bots[i % len(bots)]}" for i in range(4)]
    pages += [f"/games/{rng.randint(max(1, games - 199), max(games, 1))}" for _ in range(5)]
    return pages


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-int(share * len(ordered) * 1000) // 1000) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="length of a period")
    parser.add_argument("--rounds", type=int, default=2, help="quiet and busy periods each")
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--uploads", type=int, default=5)
    parser.add_argument("--think", type=float, default=1.0,
                        help="a viewer's mean wait between two pages, in seconds")
    parser.add_argument("--move-ms", type=int, default=1000)
    args = parser.parse_args()
    if not 1 <= args.uploads <= len(PLAYERS):
        raise SystemExit(f"--uploads: 1 to {len(PLAYERS)}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average"
          f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as folder:
        where = Path(folder)
        (where / "competition.toml").write_text(COMPETITION.format(move_ms=args.move_ms))
        tokens = {}
        for name in (*PLAYERS, "q1", "q2", "q3", "q4"):
            out = subprocess.run([TAKI, "participants", "add", name, "--db",
                                  "competition.sqlite"], cwd=where, check=True,
                                 capture_output=True, text=True).stdout
            tokens[name] = out.strip().splitlines()[-1]
        said = where / "serve.out"
        with said.open("w") as output:
            server = subprocess.Popen(
                [TAKI, "serve", "competition.toml", "--db", "competition.sqlite",
                 "--listen", "127.0.0.1:0"], cwd=where, stdout=output,
                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            url = None
            deadline = time.monotonic() + 60
            while url is None and time.monotonic() < deadline and server.poll() is None:
                found = re.search(r"serving on (http://\S+)", said.read_text())
                if found:
                    url = found.group(1)
                time.sleep(0.2)
            if url is None:
                raise SystemExit("serve did not start:\n" + said.read_text())
            run(url, where / "competition.sqlite", tokens, args)
        finally:
            server.terminate()
            server.wait(timeout=60)
            lines = said.read_text().splitlines()
            print(f"the server said {len(lines)} lines", *lines[-5:], sep="\n  ")


def run(url: str, db: Path, tokens: dict[str, str], args: argparse.Namespace) -> None:
    ladder = ("q1", "q2", "q3", "q4")
    ids = [upload(url, tokens[name], f"{name}bot", i) for i, name in enumerate(ladder)]
    for name, sub in zip(ladder, ids, strict=True):
        wait_active(url, tokens[name], sub)
    bots = [f"{name}bot@1" for name in ladder]
    time.sleep(5)  # the ladder takes its bots in
    after, _ = ladder_since(db, 0)
    periods: dict[str, list[Any]] = {"quiet": [], "busy": []}
    seen: dict[str, list[float]] = defaultdict(list)
    probe: dict[str, list[float]] = defaultdict(list)
    for round_ in range(args.rounds):
        trio.run(quiet, url, args, after, bots, probe, round_)
        after, games = ladder_since(db, after)
        periods["quiet"].extend(games)
        trio.run(busy, url, tokens, args, after, bots, seen, round_)
        after, games = ladder_since(db, after)
        periods["busy"].extend(games)
    print(f"{args.rounds} rounds of {args.seconds:.0f} s quiet and {args.seconds:.0f} s busy"
          f" ({args.viewers} viewers, think {args.think} s, {args.uploads} uploads a round);"
          f" move limit {args.move_ms} ms")
    print(f"{'ladder':8} {'games':>6} {'decisions':>10} {'mean ms':>8} {'p95 ms':>7}"
          f" {'near misses':>12} {'timeouts':>9} {'forfeits':>9}")
    for name, games in periods.items():
        use = time_use(games)
        print(f"{name:8} {use['games']:6d} {use['decisions']:10d} {use['mean']:8.1f}"
              f" {use['p95']:7.1f} {use['near']:12d} {use['timeouts']:9d}"
              f" {use['forfeits']:9d}")
    alone = [t for kind, times in probe.items() if " " not in kind for t in times]
    print(f"pages with one viewer in the quiet periods: {len(alone)} loads, p50"
          f" {statistics.median(alone):.1f} ms, p95 {percentile(alone, 0.95):.1f} ms")
    every = [t for kind, times in seen.items() if " " not in kind for t in times]
    print(f"{'page':24} {'loads':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for kind, times in sorted(seen.items()):
        print(f"{kind:24} {len(times):6d} {statistics.median(times):8.1f}"
              f" {percentile(times, 0.95):8.1f} {max(times):8.1f}")
    print(f"{'every page':24} {len(every):6d} {statistics.median(every):8.1f}"
          f" {percentile(every, 0.95):8.1f} {max(every):8.1f}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"p95 {percentile(every, 0.95):.0f} ms")


if __name__ == "__main__":
    main()
