"""The pages of the rating history: a bot's dated chart with its axes, the
leaderboard's rank changes over a day, and the full fit beside the live ratings,
labelled."""

from __future__ import annotations

import re
import time

from pages_helpers import Browsers, add_game, entrant
from served import Served

from referee.competition.history import Snapshot, record_snapshot


def snapshot(served: Served, at: float, elos: dict[str, float],
             fitted: dict[str, float] | None = None) -> None:
    record_snapshot(served.state.store.path, at, [
        Snapshot(bot, elo, elo - 100, elo + 100, 10, True, (fitted or {}).get(bot))
        for bot, elo in elos.items()])


async def test_a_bot_page_charts_its_versions_over_dated_axes(
        served: Served, browsers: Browsers) -> None:
    first, second = entrant(served, "alice", "ace"), entrant(served, "alice", "ace")
    b = entrant(served, "bob", "bee")
    add_game(served, (second, b), 0)
    start = time.mktime((2026, 11, 27, 9, 0, 0, 0, 0, 0)) - time.timezone
    for hour in range(6):
        snapshot(served, start + 3600 * hour, {first: 1500 + 10 * hour, b: 1400.0})
    snapshot(served, start + 3600 * 6, {second: 1580.0, b: 1400.0})
    page = (await browsers.new().get(f"/bots/{second}")).text
    chart = page[page.index('id="rating-chart"'):page.index("</figure>")]
    assert chart.count("<polyline") == 1 and chart.count("<circle") == 1  # ace@2: a point
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', chart)
    assert {"09:00", "12:00", "15:00"} <= set(ticks)  # the dates along the bottom (UTC)
    assert any(t.isdigit() and 1480 <= int(t) <= 1600 for t in ticks)  # Elo up the left
    assert "time (UTC)" in chart and ">Elo</text>" in chart
    assert "2026-11-27 09:00 to 2026-11-27 15:00 UTC" in chart


async def test_the_leaderboard_shows_rank_changes_and_the_full_fit_labelled(
        served: Served, browsers: Browsers) -> None:
    a, b, c = (entrant(served, who, bot) for who, bot in
               (("alice", "ace"), ("bob", "bee"), ("alice", "cat")))
    for deal in range(6):  # ace beats bee beats cat: ace 1st, bee 2nd, cat 3rd live
        add_game(served, (a, b), deal)
        add_game(served, (b, c), deal)
        add_game(served, (a, c), deal)
    day_ago = time.time() - 86400 - 60
    snapshot(served, day_ago, {c: 1600.0, b: 1500.0, a: 1400.0})  # cat led a day ago
    snapshot(served, time.time() - 5, {a: 1600.0, b: 1500.0, c: 1400.0},
             fitted={a: 1712.4, b: 1500.0, c: 1287.6})
    page = (await browsers.new().get("/live/board")).text
    rows = dict(re.findall(r'<tr data-bot="([^"]+)">(.*?)</tr>', page, re.S))
    assert 'class="up"' in rows[a] and "&#9650;2" in rows[a]
    assert 'class="down"' in rows[c] and "&#9660;2" in rows[c]
    assert '<td class="num change">=</td>' in rows[b]
    assert '<td class="num fitted">1712</td>' in rows[a]
    board = (await browsers.new().get("/")).text
    assert "<th>live Elo</th><th>full fit</th>" in board
    assert re.search(r"full fit</b>: .*, made \d{4}-\d\d-\d\d \d\d:\d\d UTC", board)
