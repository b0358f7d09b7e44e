"""Where a page's time goes: each page of a competition with ``--bots`` active bots and
``--games`` stored games, in this process (no socket, no ladder), split into reading the
new games (the digest's catch-up), building the page's values and rendering its
template, each the median of ``--repeat`` runs; then the whole request through the
application with the kept pages cleared before each (a version change) and kept.

Run from the repository root: ``.venv/bin/python benchmarks/pages_profile.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from pages_helpers import add_game, entrant  # noqa: E402
from served import served_factory  # noqa: E402

from referee.server.pages.board import (  # noqa: E402
    GameFilter,
    board_values,
    bot_values,
    crosstable_values,
)
from referee.server.pages.site import Site  # noqa: E402


def median_ms(work: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


async def profile(args: argparse.Namespace, where: Path) -> None:
    async with trio.open_nursery() as nursery:
        served = await served_factory(where, nursery)()
        bots = [entrant(served, "alice" if i % 2 else "bob", f"b{i}") for i in range(args.bots)]
        for n in range(args.games):
            a, b = bots[n % len(bots)], bots[(n * 7 + 1) % len(bots)]
            if a == b:
                b = bots[(n + 1) % len(bots)]
            add_game(served, (a, b), n)
        app = served.client._transport.app  # type: ignore[attr-defined]  # noqa: SLF001
        site: Site = app.state.pages
        print(f"{args.bots} bots, {args.games} games; load average"
              f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        began = time.perf_counter()
        await trio.to_thread.run_sync(site._read)  # noqa: SLF001
        print(f"{'read every game (digest)':34} {(time.perf_counter() - began) * 1000:8.1f} ms")
        wanted = GameFilter()
        steps: list[tuple[str, Callable[[], Any], str]] = [
            ("leaderboard rows", lambda: board_values(site), "board_rows.html"),
            ("crosstable", lambda: {**board_values(site),
                                    "crosstable": crosstable_values(site)}, "board.html"),
            ("bot page", lambda: bot_values(site, bots[0], wanted), "bot.html"),
        ]
        print(f"{'step':34} {'values ms':>9} {'render ms':>9}")
        extra = {"session": None, "csrf": "", "signed_in": ""}
        for name, build, template in steps:
            values = build()
            built = median_ms(build, args.repeat)

            def render(template: str = template, values: Any = values) -> str:
                return site.render(template, **values, **extra)
            rendered = median_ms(render, args.repeat)
            print(f"{name:34} {built:9.2f} {rendered:9.2f}")
        client = served.client
        pages = ["/", "/live/board", f"/bots/{bots[0]}", "/games/1", f"/games/{args.games}"]
        print(f"{'request':34} {'new ms':>9} {'kept ms':>9}")
        for path in pages:
            def fresh(path: str = path) -> None:
                site._kept.clear()  # noqa: SLF001
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
        nursery.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pages-profile-") as folder:
        trio.run(profile, args, Path(folder))


if __name__ == "__main__":
    main()
