"""The pages every visitor sees alike under load: many requests for a page whose games
changed render it once (the others wait for that rendering), a game's page is not
rendered again because later games were stored, and with STALE_S a page renders behind
the requests, which get the kept one (with its own ETag) meanwhile."""

from __future__ import annotations

import re
from collections import Counter

import httpx
import pytest
import trio
from pages_helpers import Browsers, add_game, entrant
from served import Served

from referee.server.pages import site as site_module
from referee.server.pages.site import Site


async def get_all(web: httpx.AsyncClient, paths: list[str]) -> list[httpx.Response]:
    answers: list[httpx.Response] = []

    async def one(path: str) -> None:
        answers.append(await web.get(path))

    async with trio.open_nursery() as nursery:
        for path in paths:
            nursery.start_soon(one, path)
    return answers


async def test_many_requests_for_a_changed_page_render_it_once(
        served: Served, browsers: Browsers, renders: Counter[str]) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0)
    web = browsers.new()
    assert (await web.get("/")).status_code == 200
    assert renders == {"board.html": 1}
    add_game(served, (a, b), 1, places=(2, 1))
    site: Site = browsers.app.state.pages
    await site.refresh()  # the new game is read: the pages' version changes, once
    answers = await get_all(web, ["/", "/live/board"] * 12)
    assert all(r.status_code == 200 for r in answers)
    assert renders == {"board.html": 2, "board_rows.html": 1}


async def test_a_games_page_is_not_rendered_again_for_later_games(
        served: Served, browsers: Browsers, renders: Counter[str]) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0)
    web = browsers.new()
    first = await web.get("/games/1")
    for deal in range(1, 4):
        add_game(served, (a, b), deal)
        assert (await web.get("/games/1")).text == first.text
    assert renders["game.html"] == 1
    assert (await web.get("/games/4")).status_code == 200
    entrant(served, "alice", "ant")  # a new bot: the pages name the bots' owners again
    assert (await web.get("/games/1")).status_code == 200
    assert renders["game.html"] == 3


async def test_a_page_renders_behind_the_requests_which_get_the_kept_one_meanwhile(
        served: Served, browsers: Browsers, renders: Counter[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0)
    web = browsers.new()
    site: Site = browsers.app.state.pages
    old = await web.get("/live/board")
    add_game(served, (a, b), 1, places=(2, 1))
    await site.refresh()
    monkeypatch.setattr(site_module, "STALE_S", 60.0)
    kept = await web.get("/live/board")
    assert kept.text == old.text and kept.headers["etag"] == old.headers["etag"]
    with trio.fail_after(10):
        # the new rows, rendered behind, and kept (the rendering's flight landed)
        while renders["board_rows.html"] < 2 or site._flights:
            await trio.sleep(0.01)
    new = await web.get("/live/board", headers={"If-None-Match": old.headers["etag"]})
    assert new.status_code == 200 and new.headers["etag"] != old.headers["etag"]
    assert re.findall(r'<td class="num games">(\d+)</td>', new.text) == ["2", "2"]
    assert renders["board_rows.html"] == 2
