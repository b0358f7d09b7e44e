"""The pages under load while the ladder plays: 50 page viewers at once and 5 uploads,
against ``taki-referee serve`` on 127.0.0.1, and what that traffic does to the ladder's
time use; this tree against an anchor commit (``--against``, default ``HEAD~1``),
alternating in one run.

Two servers run, each in a process of its own with four participants' random bots in
its ladder: one of this tree, one of the anchor (its files taken with ``git archive``,
run by this virtualenv's Python). Each round measures both, in turns (AB, then BA),
with the other server's ladder paused. Quiet periods (the ladder alone) and busy
periods (the ladder, ``--viewers`` viewers that each load a page, wait ``--think``
seconds and load another, and one upload by each of ``--uploads`` participants, each
built and checked in the sandbox) alternate, ``--rounds`` times each, so a drift of the
machine's speed hits both alike. A single viewer loads pages in the quiet periods: the
latency of a page on this machine without the traffic. For each server and kind of
period: the games stored, their decisions, the bots' mean and p95 answer times, near
misses (an answer within 10% of the time the bot had), timeouts and forfeits; for the
busy periods the latency of every page load (p50, p95, max) by page, and how late
the load's own event loop wakes (``client lag``: its share of every latency). The load average is
printed at the start, at every period and at the end.

Its last line is ``p95 N ms``: the 95th percentile of every page load of this tree in
the busy periods. Run from the repository root: ``.venv/bin/python benchmarks/serve.py``
(about 6 minutes; bubblewrap must be installed, as for any competition);
``--against none`` measures this tree alone.
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

import attrs
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
        "Authorization": f"Bearer {token}"}, method="GET" if body is None else "POST")
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


async def lag(until: float, seen: dict[str, list[float]]) -> None:
    """How late this client's own event loop wakes (its share of every latency)."""
    while time.monotonic() < until:
        began = time.perf_counter()
        await trio.sleep(0.05)
        seen["client lag"].append((time.perf_counter() - began - 0.05) * 1000)


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
        nursery.start_soon(lag, until, seen)
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


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


@attrs.define
class Server:
    """A competition served by one tree's code, with its ladder's four bots."""

    label: str
    where: Path
    process: subprocess.Popen[bytes]
    url: str = ""
    tokens: dict[str, str] = attrs.Factory(dict)
    organizer: str = ""
    bots: list[str] = attrs.Factory(list)
    after: int = 0
    periods: dict[str, list[Any]] = attrs.Factory(lambda: {"quiet": [], "busy": []})
    seen: dict[str, list[float]] = attrs.Factory(lambda: defaultdict(list))
    probe: dict[str, list[float]] = attrs.Factory(lambda: defaultdict(list))

    @property
    def db(self) -> Path:
        return self.where / "competition.sqlite"


def command(tree: Path | None) -> list[str]:
    """How to run ``taki-referee`` of ``tree`` (None: this tree, as installed)."""
    if tree is None:
        return [TAKI]
    return [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1));"
            " from referee.cli.main import main; sys.exit(main())", str(tree)]


def anchor_tree(ref: str, into: Path) -> Path:
    """The files of commit ``ref`` of this repository, in ``into``."""
    into.mkdir()
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True,
                         capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive_file:
        archive_file.extractall(into, filter="data")
    return into


#: The viewers all come from 127.0.0.1: the per-client rate limit (of a tree that has
#: one) is lifted, as for a proxy that many readers share.
UNLIMITED = "[competition]\nrequests_per_second = 100000\nrequest_burst = 100000\n"


def start(label: str, where: Path, taki: list[str], move_ms: int, tree: Path) -> Server:
    where.mkdir()
    text = COMPETITION.format(move_ms=move_ms)
    if "requests_per_second" in (tree / "referee/competition/config.py").read_text():
        text = text.replace("[competition]\n", UNLIMITED, 1)
    (where / "competition.toml").write_text(text)
    tokens = {}
    for name in (*PLAYERS, "q1", "q2", "q3", "q4"):
        out = subprocess.run([*taki, "participants", "add", name, "--db",
                              "competition.sqlite"], cwd=where, check=True,
                             capture_output=True, text=True).stdout
        tokens[name] = out.strip().splitlines()[-1]
    with (where / "serve.out").open("w") as output:
        process = subprocess.Popen(
            [*taki, "serve", "competition.toml", "--db", "competition.sqlite",
             "--listen", "127.0.0.1:0"], cwd=where, stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True)
    server = Server(label, where, process, tokens=tokens)
    deadline = time.monotonic() + 60
    while not server.url and time.monotonic() < deadline and process.poll() is None:
        found = re.search(r"serving on (http://\S+)", (where / "serve.out").read_text())
        if found:
            server.url = found.group(1)
        time.sleep(0.2)
    if not server.url:
        raise SystemExit(f"serve ({label}) did not start:\n"
                         + (where / "serve.out").read_text())
    server.organizer = (where / "organizer.token").read_text().strip()
    return server


def enter_bots(server: Server) -> None:
    ladder = ("q1", "q2", "q3", "q4")
    ids = [upload(server.url, server.tokens[name], f"{name}bot", i)
           for i, name in enumerate(ladder)]
    for name, sub in zip(ladder, ids, strict=True):
        wait_active(server.url, server.tokens[name], sub)
    server.bots = [f"{name}bot@1" for name in ladder]


def ladder(server: Server, play: bool) -> None:
    api(f"{server.url}/api/ladder/{'resume' if play else 'pause'}", server.organizer, b"")


def stop(server: Server) -> None:
    server.process.terminate()
    server.process.wait(timeout=60)
    lines = (server.where / "serve.out").read_text().splitlines()
    print(f"the server of {server.label} said {len(lines)} lines", *lines[-3:],
          sep="\n  ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="length of a period")
    parser.add_argument("--rounds", type=int, default=2, help="quiet and busy periods each")
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--uploads", type=int, default=5)
    parser.add_argument("--think", type=float, default=1.0,
                        help="a viewer's mean wait between two pages, in seconds")
    parser.add_argument("--move-ms", type=int, default=1000)
    parser.add_argument("--against", default="HEAD~1",
                        help="the anchor commit to compare with (none: this tree alone)")
    args = parser.parse_args()
    if not 1 <= args.uploads <= len(PLAYERS):
        raise SystemExit(f"--uploads: 1 to {len(PLAYERS)}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load()}")
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as folder:
        where = Path(folder)
        trees: list[tuple[str, Path | None]] = [("this tree", None)]
        if args.against != "none":
            commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                                     args.against], check=True, capture_output=True,
                                    text=True).stdout.strip()
            trees.insert(0, (f"anchor {commit}",
                             anchor_tree(args.against, where / "anchor-tree")))
        servers: list[Server] = []
        try:
            for index, (label, tree) in enumerate(trees):
                servers.append(start(label, where / f"competition{index}", command(tree),
                                     args.move_ms, tree or ROOT))
            for server in servers:
                enter_bots(server)
            run(servers, args)
        finally:
            for server in servers:
                stop(server)


def measure(server: Server, args: argparse.Namespace, round_: int) -> None:
    time.sleep(5)  # the ladder takes its bots in
    server.after, _ = ladder_since(server.db, server.after)
    trio.run(quiet, server.url, args, server.after, server.bots, server.probe, round_)
    server.after, games = ladder_since(server.db, server.after)
    server.periods["quiet"].extend(games)
    trio.run(busy, server.url, server.tokens, args, server.after, server.bots, server.seen,
             round_)
    server.after, games = ladder_since(server.db, server.after)
    server.periods["busy"].extend(games)
    print(f"round {round_ + 1}, {server.label}: load average {load()}", flush=True)


def run(servers: list[Server], args: argparse.Namespace) -> None:
    for round_ in range(args.rounds):
        turn = servers if round_ % 2 == 0 else servers[::-1]
        for server in turn:
            for other in servers:
                ladder(other, other is server)
            measure(server, args, round_)
    print(f"{args.rounds} rounds of {args.seconds:.0f} s quiet and {args.seconds:.0f} s busy"
          f" for each ({args.viewers} viewers, think {args.think} s, {args.uploads} uploads"
          f" a round); move limit {args.move_ms} ms")
    for server in servers:
        report(server)
    print(f"load average {load()}")
    every = [t for kind, times in servers[-1].seen.items() if " " not in kind for t in times]
    print(f"p95 {percentile(every, 0.95):.0f} ms")


def report(server: Server) -> None:
    print(f"\n== {server.label}")
    print(f"{'ladder':8} {'games':>6} {'decisions':>10} {'mean ms':>8} {'p95 ms':>7}"
          f" {'near misses':>12} {'timeouts':>9} {'forfeits':>9}")
    for name, games in server.periods.items():
        use = time_use(games)
        print(f"{name:8} {use['games']:6d} {use['decisions']:10d} {use['mean']:8.1f}"
              f" {use['p95']:7.1f} {use['near']:12d} {use['timeouts']:9d}"
              f" {use['forfeits']:9d}")
    alone = [t for kind, times in server.probe.items() if " " not in kind for t in times]
    if alone:
        print(f"pages with one viewer in the quiet periods: {len(alone)} loads, p50"
              f" {statistics.median(alone):.1f} ms, p95 {percentile(alone, 0.95):.1f} ms")
    every = [t for kind, times in server.seen.items() if " " not in kind for t in times]
    print(f"{'page':24} {'loads':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for kind, times in sorted(server.seen.items()):
        print(f"{kind:24} {len(times):6d} {statistics.median(times):8.1f}"
              f" {percentile(times, 0.95):8.1f} {max(times):8.1f}")
    if every:
        print(f"{'every page':24} {len(every):6d} {statistics.median(every):8.1f}"
              f" {percentile(every, 0.95):8.1f} {max(every):8.1f}")


if __name__ == "__main__":
    main()
