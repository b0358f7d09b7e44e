"""The public pages in process: the leaderboard and its live rows, the crosstable with
many bots, bot pages (versions, filters, pages of games), game pages with the replay
viewer, and what the public never sees (another participant's stderr)."""

from __future__ import annotations

import re

import pytest
from pages_helpers import Browsers, add_game, entrant
from served import Served

from referee.server.pages import board


async def test_the_leaderboard_lists_the_bots_and_its_rows_follow_new_games(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0)
    web = browsers.new()
    page = await web.get("/")
    assert page.status_code == 200
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    rows = re.findall(r'<tr data-bot="([^"]+)">', page.text)
    assert rows[:2] == [a, b]
    assert 'data-live="/live/board"' in page.text
    assert '<script src="/static/live.js"' in page.text
    live = await web.get("/live/board")
    assert live.status_code == 200 and live.headers["etag"]
    same = await web.get("/live/board", headers={"If-None-Match": live.headers["etag"]})
    assert same.status_code == 304
    add_game(served, (a, b), 1, places=(2, 1))
    add_game(served, (a, b), 2, places=(2, 1))
    moved = await web.get("/live/board", headers={"If-None-Match": live.headers["etag"]})
    assert moved.status_code == 200
    games = re.findall(r'<td class="num games">(\d+)</td>', moved.text)
    assert games == ["3", "3"]
    assert re.findall(r'<tr data-bot="([^"]+)">', moved.text) == [b, a]
    again = await web.get("/")  # a visitor's page kept rendered is made again
    assert re.findall(r'<tr data-bot="([^"]+)">', again.text)[:2] == [b, a]
    assert "taki_visitor" not in again.headers.get("set-cookie", "")
    script = await web.get("/static/live.js")
    assert script.status_code == 200 and "data-live" in script.text


async def test_a_new_bot_is_marked_in_placement(served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0)
    rows = (await browsers.new().get("/live/board")).text
    assert rows.count('class="badge placing"') == 2  # 10 games make a bot placed


async def test_sixty_bots_all_reach_the_crosstable_which_scrolls(
        served: Served, browsers: Browsers) -> None:
    bots = [entrant(served, "alice" if i % 2 else "bob", f"b{i:02d}") for i in range(60)]
    for i in range(60):
        add_game(served, (bots[i], bots[(i + 1) % 60]), 0)
    page = (await browsers.new().get("/")).text
    table = page[page.index('<table id="crosstable">'):]
    table = table[:table.index("</table>")]
    assert len(re.findall(r"<tr><th>", table)) == 60
    assert all(f">{bot}</a>" in table for bot in bots)
    assert 'class="scroll crosstable-box"' in page
    css = (await browsers.new().get("/static/pages.css")).text
    assert re.search(r"\.scroll \{ overflow: auto;", css)


async def test_a_bot_page_shows_versions_filters_and_pages_of_games(
        served: Served, browsers: Browsers) -> None:
    first = entrant(served, "alice", "ace")
    second = entrant(served, "alice", "ace")
    b, c = entrant(served, "bob", "bee"), entrant(served, "bob", "cat")
    for deal in range(60):
        add_game(served, (second, b), deal, places=(1, 2) if deal % 3 else (2, 1))
    for deal in range(5):
        add_game(served, (second, b, c), deal)
        add_game(served, (first, c), deal)
    web = browsers.new()
    page = await web.get(f"/bots/{second}")
    assert page.status_code == 200
    assert re.findall(r'<tr data-bot="([^"]+)">', page.text) == [first, second]
    assert "Games (65 of 65)" in page.text
    assert 'rel="next"' in page.text and "page 1 of 2" in page.text
    assert "No rating history yet" in page.text  # none recorded: tests/pages/test_history_pages.py
    three = await web.get(f"/bots/{second}", params={"size": "3"})
    assert "Games (5 of 65)" in three.text
    against = await web.get(f"/bots/{second}", params={"opponent": c})
    assert "Games (5 of 65)" in against.text
    lost = await web.get(f"/bots/{second}", params={"result": "lost", "size": "2"})
    assert "Games (20 of 65)" in lost.text
    assert (await web.get("/bots/nobody@1")).status_code == 404


async def test_names_and_details_full_of_html_are_shown_as_text(
        served: Served, browsers: Browsers) -> None:
    evil = "<script>alert(1)</script>"
    a = entrant(served, "alice", "ace")
    add_game(served, (evil, a), 0, forfeit=(0, '<img src=x onerror="alert(2)"> died'))
    web = browsers.new()
    for url in ("/", "/live/board", "/games/1", f"/bots/{a}"):
        text = (await web.get(url)).text
        assert "<script>alert" not in text and "<img src=x" not in text, url
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (await web.get("/")).text
    assert "&lt;img src=x onerror=" in (await web.get("/games/1")).text


async def test_a_game_page_serves_the_viewer_without_the_crash_stderr(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0, forfeit=(0, "exited with status 1\nsecret stderr line"),
             replay=True)
    web = browsers.new()
    page = await web.get("/games/1")
    assert '<iframe name="viewer" id="viewer"' in page.text
    assert "secret stderr line" not in page.text
    viewer = await web.get("/games/1/viewer")
    assert viewer.status_code == 200
    assert "exited with status 1" in viewer.text
    assert "secret stderr line" not in viewer.text
    assert "frame-ancestors 'self'" in viewer.headers["content-security-policy"]
    assert (await web.get("/games/2")).status_code == 404
    assert (await web.get("/games/2/viewer")).status_code == 404


async def test_the_crosstable_keeps_the_best_rated_bots_when_there_are_too_many(
        served: Served, browsers: Browsers, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(board, "CROSSTABLE_BOTS", 3)
    bots = [entrant(served, "alice", f"b{i}") for i in range(5)]
    for i in range(4):
        add_game(served, (bots[i], bots[4]), 0)  # the last one loses every game
    page = (await browsers.new().get("/")).text
    table = page[page.index('<table id="crosstable">'):page.index("</table>",
                                                                  page.index("crosstable"))]
    assert len(re.findall(r"<tr><th>", table)) == 3 and bots[4] not in table
    assert "The 3 best rated bots; 2 more are on the leaderboard." in page
    assert len(re.findall(r'<tr data-bot="', page)) == 5


async def test_the_leaderboard_is_paged_and_a_bot_is_found_on_its_page(
        served: Served, browsers: Browsers, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(board, "BOARD_ROWS", 2)
    bots = [entrant(served, "alice", f"b{i}") for i in range(5)]
    for i in range(4):
        for n in range(i + 1):  # b0 wins once, b3 four times; b4 loses every game
            add_game(served, (bots[i], bots[4]), 10 * i + n)
    web = browsers.new()
    pages = [(await web.get(f"/?page={n}")).text for n in (1, 2, 3)]
    shown = [re.findall(r'<tr data-bot="([^"]+)">', page) for page in pages]
    assert [len(rows) for rows in shown] == [2, 2, 1]
    order = [bot for rows in shown for bot in rows]
    assert sorted(order) == sorted(bots) and order[-1] == bots[4]
    assert (await web.get("/")).text == pages[0]
    assert "Page 1 of 3" in pages[0] and 'href="/?page=3"' in pages[0]
    assert 'data-live="/live/board"' in pages[0]
    assert re.findall(r'<td class="num">(\d+)</td>', pages[2])[0] == "5"  # its rank
    assert 'data-live="/live/board?page=3"' in pages[2]
    assert (await web.get("/?page=99")).text.count('<tr data-bot="') == 1  # the last page
    rows = (await web.get("/live/board?page=2")).text
    assert re.findall(r'<tr data-bot="([^"]+)">', rows) == order[2:4]
    found = await web.get(f"/?bot={order[3]}")
    assert found.status_code == 303 and found.headers["location"] == "/?page=2"
    by_name = await web.get("/?bot=b4")  # the bot's name without its version
    assert by_name.status_code == 303 and by_name.headers["location"] == "/?page=3"
    top = await web.get(f"/?bot={order[0]}")
    assert top.status_code == 303 and top.headers["location"] == "/"
    missing = await web.get("/?bot=nobody")
    assert missing.status_code == 404 and "no bot named" in missing.text
