"""The pages' caching, as a browser and a crowd of visitors see it: a game that lands
shows on the leaderboard within the bound docs/competition.md states (REFRESH_S +
STALE_S), a page the browser has already is answered 304 (its ETag) without being
rendered again, the pages of stored games and their viewers may be kept by browsers,
a signed-in participant's page is never kept nor shown to anyone else, and a game's
page is answered while the shared pages' renderers are all busy."""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import unquote

import pytest
import trio
from pages_helpers import Browsers, add_game, entrant, sign_in
from served import Served

from referee.server.pages import site as site_module
from referee.server.pages.site import Site


def games_shown(page: str) -> list[str]:
    return re.findall(r'<td class="num games">(\d+)</td>', page)


async def test_a_new_game_shows_on_the_leaderboard_within_refresh_and_stale(
        served: Served, browsers: Browsers, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site_module, "REFRESH_S", 0.2)
    monkeypatch.setattr(site_module, "STALE_S", 0.3)
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0)
    web = browsers.new()
    assert games_shown((await web.get("/")).text) == ["1", "1"]
    add_game(served, (a, b), 1, places=(2, 1))
    # Within the bound a visitor may still see the kept page; past it, never.
    await trio.sleep(0.2 + 0.3 + 0.05)
    assert games_shown((await web.get("/")).text) == ["2", "2"]
    assert games_shown((await web.get("/live/board")).text) == ["2", "2"]


async def test_a_page_the_browser_has_is_answered_304_without_rendering(
        served: Served, browsers: Browsers, renders: Counter[str]) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0, replay=True)
    web = browsers.new()
    for path, template in (("/", "board.html"), ("/live/board", "board_rows.html"),
                           (f"/bots/{a}", "bot.html"), ("/games/1", "game.html")):
        first = await web.get(path)
        tag = first.headers["etag"]
        again = await web.get(path, headers={"If-None-Match": tag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == tag
        assert renders[template] == 1, path
        assert "cache;desc=\"hit\"" in again.headers["server-timing"]
    assert (await web.get("/")).headers["cache-control"] == "no-cache"
    game = await web.get("/games/1")
    assert game.headers["cache-control"].startswith("public, max-age=")
    assert game.headers["vary"] == "Cookie"
    viewer = await web.get("/games/1/viewer")
    assert "immutable" in viewer.headers["cache-control"]
    kept = await web.get("/games/1/viewer", headers={"If-None-Match": viewer.headers["etag"]})
    assert kept.status_code == 304 and kept.content == b""
    # A new game changes the leaderboard: the old tag gets the new page.
    old = (await web.get("/")).headers["etag"]
    add_game(served, (a, b), 1, places=(2, 1))
    new = await web.get("/", headers={"If-None-Match": old})
    assert new.status_code == 200 and new.headers["etag"] != old
    assert games_shown(new.text) == ["2", "2"]


async def test_a_participants_pages_are_never_kept_nor_shown_to_others(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0, replay=True)
    visitor, alice, bob = browsers.new(), browsers.new(), browsers.new()
    public = await visitor.get("/games/1")  # kept for visitors first
    assert "stderr log" not in public.text
    await sign_in(alice, served.tokens["alice"])
    await sign_in(bob, served.tokens["bob"])
    for client, own, other in ((alice, a, b), (bob, b, a), (alice, a, b)):
        page = await client.get("/me")
        assert page.status_code == 200
        assert page.headers["cache-control"] == "no-store" and "etag" not in page.headers
        assert page.headers["vary"] == "Cookie"
        mine = [unquote(b) for b in re.findall(r'href="/bots/([^"]+)"', page.text)]
        assert own in mine and other not in mine
        game = await client.get("/games/1", headers={"If-None-Match": public.headers["etag"]})
        assert game.status_code == 200 and game.headers["cache-control"] == "no-store"
        seat = 0 if own == a else 1
        assert f"/games/1/seats/{seat}/log" in game.text
        assert f"/games/1/seats/{1 - seat}/log" not in game.text
    again = await visitor.get("/games/1")
    assert again.text == public.text and "stderr log" not in again.text
    assert (await visitor.get("/me")).status_code == 401


async def test_a_games_page_is_answered_while_the_shared_pages_renderers_are_busy(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0)
    web = browsers.new()
    assert (await web.get("/")).status_code == 200  # the first read of the games
    site: Site = browsers.app.state.pages
    holders = [object() for _ in range(site_module.RENDERERS)]
    for holder in holders:  # every renderer of the shared pages busy
        await site.limiter.acquire_on_behalf_of(holder)
    try:
        with trio.fail_after(30):
            game = await web.get("/games/1")
        assert game.status_code == 200 and "Game 1" in game.text
    finally:
        for holder in holders:
            site.limiter.release_on_behalf_of(holder)
