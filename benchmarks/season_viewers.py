"""The viewers of ``season.py``: many clients loading pages, in several processes, and
where their time went.

Each of ``--client-processes`` processes runs its share of the viewers on a trio loop of
its own (so the clients do not queue behind each other on one interpreter) and measures
that loop's lag (how late a 10 ms sleep wakes: what the client adds to a page's time).
A page's time as the client saw it is split with the server's ``Server-Timing``
(``serve --timing``): the time before the application had the request (``before``:
the client sending it, the server accepting and parsing it, the server's event loop
busy with other steps), the application (``app``; for a page, its handler's parts:
the wait for a worker thread, the queries, the values, the template) and the time
after (``after``: the answer's way back through the server's loop and the client's).
Client and server read the same monotonic clock (one machine).
"""

from __future__ import annotations

import math
import multiprocessing
import random
import re
import statistics
import time
from collections import defaultdict
from typing import Any

import httpx
import trio

#: The parts of a page's time the server tells in its Server-Timing header.
PARTS = ("queue", "sql", "values", "render", "total", "app")
#: The parts measured across the client and the server.
SPLIT = ("before", "after")
TICK_S = 0.01


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def server_timing(header: str) -> dict[str, Any]:
    """The durations (ms) and the descriptions of a Server-Timing header."""
    found: dict[str, Any] = {}
    for part in header.split(","):
        name, _, rest = part.strip().partition(";")
        if rest.startswith("dur="):
            found[name] = float(rest[4:])
        elif rest.startswith("desc="):
            found[name] = rest[5:].strip('"')
    return found


def kind_of(path: str) -> str:
    return re.sub(r"\d+", "N", re.sub(r"/bots/[^?]*", "/bots/B", path))


async def viewer(client: httpx.AsyncClient, paths: list[str], games: int, think: float,
                 until: float, seen: dict[str, list[float]], rng: random.Random,
                 server: dict[str, list[dict[str, Any]]]) -> None:
    while time.monotonic() < until:
        path = rng.choice(paths)
        kind = kind_of(path)
        if path == "/games/N":
            path = f"/games/{rng.randint(1, games)}"
        sent = time.monotonic()
        try:
            answer = await client.get(path)
        except httpx.HTTPError as exc:
            seen[f"{kind} error {type(exc).__name__}"].append(0.0)
            continue
        received = time.monotonic()
        took = (received - sent) * 1000
        if answer.status_code not in (200, 304):
            kind = f"{kind} {answer.status_code}"  # the floor's 404s are not pages
        seen[kind].append(took)
        if "server-timing" in answer.headers:
            told = server_timing(answer.headers["server-timing"])
            if "arrived" in told and "app" in told:
                arrived = float(told["arrived"])
                told["before"] = (arrived - sent) * 1000
                told["after"] = (received - arrived) * 1000 - told["app"]
            server[kind].append({**told, "client": took})
        await trio.sleep(rng.uniform(0.5, 1.5) * think)


async def ticker(until: float, lags: list[float]) -> None:
    """The lag of this client's loop, every TICK_S."""
    while time.monotonic() < until:
        began = time.perf_counter()
        await trio.sleep(TICK_S)
        lags.append(max(0.0, time.perf_counter() - began - TICK_S) * 1000)


async def _viewers(url: str, cookies: dict[str, str], plan: list[tuple[list[str], bool]],
                   games: int, think: float, until: float, seed: int) -> dict[str, Any]:
    seen: dict[str, list[float]] = defaultdict(list)
    server: dict[str, list[dict[str, Any]]] = defaultdict(list)
    lags: list[float] = []
    limits = httpx.Limits(max_connections=max(1, len(plan)), keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client, \
            httpx.AsyncClient(base_url=url, timeout=60, cookies=cookies) as signed, \
            trio.open_nursery() as nursery:
        rng = random.Random(seed)
        nursery.start_soon(ticker, until, lags)
        for paths, own in plan:
            nursery.start_soon(viewer, signed if own else client, paths, games, think, until,
                               seen, random.Random(rng.random()), server)
    return {"seen": dict(seen), "server": dict(server), "lags": lags}


def viewers_process(url: str, cookies: dict[str, str], plan: list[tuple[list[str], bool]],
                    games: int, think: float, until: float, seed: int) -> dict[str, Any]:
    """One client process: its viewers until ``until`` (the monotonic clock)."""
    return trio.run(_viewers, url, cookies, plan, games, think, until, seed)


def sign_in(url: str, token: str) -> dict[str, str]:
    """The cookies of a participant signed in with ``token``."""
    with httpx.Client(base_url=url, timeout=60) as client:
        form = client.get("/signin")
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert csrf is not None, "the sign-in form has no CSRF field"
        answer = client.post("/signin", data={"csrf": csrf.group(1), "token": token})
        assert answer.status_code in (200, 303), answer.text[:300]
        return dict(client.cookies.items())


def plans(viewers: int, processes: int, public: list[str]
          ) -> list[list[tuple[list[str], bool]]]:
    """The viewers of each process: one in ten a participant on their own page, and in
    the first process the floor (a path no page has: a 404, no thread, no database,
    asked as often as one viewer asks, through the same HTTP server and event loop)."""
    out: list[list[tuple[list[str], bool]]] = [[] for _ in range(max(1, processes))]
    out[0].append((["/no-such-page"], False))
    for i in range(viewers):
        own = i % 10 == 0
        out[i % len(out)].append((["/me"] if own else public, own))
    return out


def start_viewers(url: str, token: str, public: list[str], games: int, viewers: int,
                  processes: int, think: float, until: float
                  ) -> multiprocessing.pool.AsyncResult[list[dict[str, Any]]]:
    """The viewers, started in ``processes`` processes; their results when they end."""
    cookies = sign_in(url, token)
    pool = multiprocessing.get_context("fork").Pool(max(1, processes))
    work = [(url, cookies, plan, games, think, until, 5 + k)
            for k, plan in enumerate(plans(viewers, processes, public))]
    result = pool.starmap_async(viewers_process, work)
    pool.close()
    return result


def gathered(results: list[dict[str, Any]]) -> dict[str, Any]:
    seen: dict[str, list[float]] = defaultdict(list)
    server: dict[str, list[dict[str, Any]]] = defaultdict(list)
    lags: list[float] = []
    for one in results:
        for kind, times in one["seen"].items():
            seen[kind] += times
        for kind, told in one["server"].items():
            server[kind] += told
        lags += one["lags"]
    return {"seen": seen, "server": server, "client_lags": lags}


def merged(periods: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of several periods of one version as one (its starts and RSS: the
    medians and the last period's)."""
    seen: dict[str, list[float]] = defaultdict(list)
    server: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for period in periods:
        for kind, times in period["seen"].items():
            seen[kind] += times
        for kind, told in period["server"].items():
            server[kind] += told
    last = periods[-1]
    return {**last, "seen": seen, "server": server,
            "client_lags": [lag for p in periods for lag in p["client_lags"]],
            "loop": [line for p in periods for line in p["loop"]],
            "start": statistics.median(p["start"] for p in periods),
            "cpu": statistics.mean(p["cpu"] for p in periods)}


def parts(server: dict[str, list[dict[str, Any]]], client_lags: list[float]) -> None:
    """Where the pages' time went, by kind: the p50/p95 of each part the server told,
    of the time before and after the application, and how the pages were found."""
    print(f"\nwhere the time went, p50/p95 ms{'':3}" + "".join(
        f"{p:>13}" for p in (*PARTS, *SPLIT)) + "  found")
    for kind, told in sorted(server.items()):
        cells = []
        for part in (*PARTS, *SPLIT):
            values = [t[part] for t in told if part in t]
            cells.append(f"{statistics.median(values):5.1f}/{percentile(values, 0.95):6.0f}"
                         if values else f"{'-':>12}")
        found: dict[str, int] = defaultdict(int)
        for t in told:
            found[t.get("cache", "-")] += 1
        print(f"{kind:34} " + "".join(f"{c:>13}" for c in cells) + "  "
              + " ".join(f"{how} {n}" for how, n in sorted(found.items())))
    if client_lags:
        print(f"the clients' loops: lag p50 {statistics.median(client_lags):.1f} ms, p95"
              f" {percentile(client_lags, 0.95):.1f} ms, max {max(client_lags):.0f} ms"
              f" ({len(client_lags)} ticks of {TICK_S * 1000:.0f} ms)")
