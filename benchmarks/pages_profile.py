"""Where a page's time goes, in this process (no socket, no ladder): each kind of page
split into building its values (its queries apart) and rendering its template, each the
median of ``--repeat`` runs; ``--profile N`` adds the N costliest functions of each
(cProfile, by cumulative time) and the query plan of each of its queries (``EXPLAIN
QUERY PLAN``); then the whole request through the application, rendered anew (the kept
pages cleared) and kept.

On a competition of ``--bots`` active bots and ``--games`` stored games made here, or with
``--db`` on a copy of a season's database (``benchmarks/season.py`` keeps one in its
``--cache``: ``--db /tmp/taki-season/season-1000-1000000.sqlite``, copied with its files
folder to a temporary directory first). Run from the repository root::

    .venv/bin/python benchmarks/pages_profile.py [--bots 8 --games 2000 | --db FILE]
                                                 [--repeat 20] [--profile 12]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from pages_helpers import add_game, entrant  # noqa: E402
from served import served_factory  # noqa: E402

from referee.competition.config import CompetitionConfig  # noqa: E402
from referee.competition.hosting import CompetitionHost  # noqa: E402
from referee.competition.store import CompetitionStore  # noqa: E402
from referee.competition.workspace import Workspace  # noqa: E402
from referee.server.app import build_app  # noqa: E402
from referee.server.pages import public  # noqa: E402
from referee.server.pages.board import (  # noqa: E402
    GameFilter,
    board_values,
    bot_values,
    recent_values,
)
from referee.server.pages.site import Site  # noqa: E402
from referee.server.pages.stored import sql_seconds  # noqa: E402


def median_ms(work: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def profiled(name: str, work: Callable[[], Any], site: Site, top: int) -> None:
    """The ``top`` costliest functions of ``work`` and the plans of its queries."""
    queries: list[str] = []
    db = site.digest.stored_games._db  # noqa: SLF001  # its queries, traced
    db.set_trace_callback(queries.append)
    profile = cProfile.Profile()
    try:
        profile.runcall(work)
    finally:
        db.set_trace_callback(None)
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(top)
    print(f"--- {name}: cProfile, {top} costliest by cumulative time")
    print("\n".join(line for line in out.getvalue().splitlines()
                    if line.strip() and "Ordered by" not in line and "List reduced" not in line))
    for sql in dict.fromkeys(queries):
        plan = db.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
        print(f"  {sql[:150]}{' ...' if len(sql) > 150 else ''}")
        for row in plan:
            print(f"      {row[-1]}")


def steps(site: Site, bot: str, participant: str, game: int
          ) -> list[tuple[str, Callable[[], Any], str]]:
    """Each kind of page: its values, and its template."""
    stored = site.digest.stored_games
    return [
        ("leaderboard", lambda: {**public._board(site, 1),  # noqa: SLF001
                                 "season": site.state.season_json()}, "board.html"),
        ("leaderboard rows", lambda: board_values(site), "board_rows.html"),
        ("bot page", lambda: bot_values(site, bot, GameFilter()), "bot.html"),
        ("bot page 7", lambda: bot_values(site, bot, GameFilter(page=7)), "bot.html"),
        ("bot's forfeits", lambda: bot_values(site, bot, GameFilter(result="forfeit")),
         "bot.html"),
        ("game page", lambda: {"game": stored.game(game), "own": [], "owners": {
            s.bot: None for s in getattr(stored.game(game), "seats", ())}}, "game.html"),
        ("participant's page", lambda: {
            **recent_values(site, participant), "subs": [], "limits":
            site.state.config.submissions, "frozen": False, "problem": "", "token": "",
            "upload_key": ""}, "me.html"),
    ]


async def measure(site: Site, client: httpx.AsyncClient, args: argparse.Namespace,
                  game: int) -> None:
    began = time.perf_counter()
    await trio.to_thread.run_sync(site._read)  # noqa: SLF001
    print(f"{'read the bots (digest)':34} {(time.perf_counter() - began) * 1000:8.1f} ms")
    # The bot with the most games, and its owner.
    bot = max(site.digest.bots, key=lambda b: (site.digest.bots[b].games, b))
    participant = site.entrants[bot].participant
    print(f"the bot page of {bot} ({site.digest.bots[bot].games} games); game {game}")
    extra = {"session": None, "csrf": "", "signed_in": ""}
    kinds = steps(site, bot, participant, game)

    def by_step() -> None:
        print(f"{'page':34} {'values ms':>9} {'sql (mean)':>12} {'render ms':>9}")
        for name, build, template in kinds:
            values = build()
            spent = sql_seconds()
            built = median_ms(build, args.repeat)
            sql = (sql_seconds() - spent) / args.repeat * 1000

            def render(template: str = template, values: Any = values) -> str:
                return site.render(template, **values, **extra)
            rendered = median_ms(render, args.repeat)
            print(f"{name:34} {built:9.2f} {sql:12.2f} {rendered:9.2f}")
        if args.profile:
            for name, build, template in kinds:
                def whole(build: Callable[[], Any] = build, template: str = template) -> str:
                    return site.render(template, **build(), **extra)
                profiled(name, whole, site, args.profile)
    await trio.to_thread.run_sync(by_step)
    pages = ["/", "/live/board", f"/bots/{bot}", f"/bots/{bot}?page=7", f"/games/{game}"]
    print(f"{'request':34} {'new ms':>9} {'kept ms':>9}")
    for path in pages:
        def fresh(path: str = path) -> None:
            site._kept.clear()  # noqa: SLF001
            site._games.clear()  # noqa: SLF001
            site.crosstables.clear()
            trio.from_thread.run(client.get, path)

        def again(path: str = path) -> None:
            trio.from_thread.run(client.get, path)

        def new_ms(fresh: Callable[[], None] = fresh) -> float:
            return median_ms(fresh, args.repeat)

        def kept_ms(again: Callable[[], None] = again) -> float:
            return median_ms(again, args.repeat)
        new = await trio.to_thread.run_sync(new_ms)
        kept = await trio.to_thread.run_sync(kept_ms)
        print(f"{path:34} {new:9.2f} {kept:9.2f}")


async def synthetic(args: argparse.Namespace, where: Path) -> None:
    async with trio.open_nursery() as nursery:
        served = await served_factory(where, nursery, _Patch())()
        bots = [entrant(served, "alice" if i % 2 else "bob", f"b{i}") for i in range(args.bots)]
        for n in range(args.games):
            a, b = bots[n % len(bots)], bots[(n * 7 + 1) % len(bots)]
            if a == b:
                b = bots[(n + 1) % len(bots)]
            add_game(served, (a, b), n)
        app = served.client._transport.app  # type: ignore[attr-defined]  # noqa: SLF001
        print(f"{args.bots} bots, {args.games} games; load average {load()}")
        await measure(app.state.pages, served.client, args, 1)
        nursery.cancel_scope.cancel()


async def season(args: argparse.Namespace, where: Path) -> None:
    source = Path(args.db)
    db = where / "competition.sqlite"
    shutil.copy(source, db)
    files = source.with_name(f"{source.stem}-files")
    if files.is_dir():
        shutil.copytree(files, where / "competition-files", symlinks=True)
    config = CompetitionConfig(path=where / "competition.toml")
    store = CompetitionStore(db)
    send, _ = trio.open_memory_channel[None](1)
    state = CompetitionHost(config, store, Workspace(config.files_dir(db)), "0" * 64, send)
    await state.open_season()
    app = build_app(state)
    print(f"{len(store.submissions())} bots, a copy of {source}; load average {load()}")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://competition.test") as client:
        await measure(app.state.pages, client, args, 123_457)


class _Patch:
    """What served_factory needs of pytest's monkeypatch, outside pytest."""

    def setattr(self, target: Any, name: str, value: Any) -> None:
        setattr(target, name, value)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--db", help="a copy of this season database is profiled")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="the N costliest functions of each page, and its query plans")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pages-profile-") as folder:
        trio.run(season if args.db else synthetic, args, Path(folder))


if __name__ == "__main__":
    main()
