"""The finals started from the organizer's page of the real ``taki-referee serve``: the
server plays them itself; killed with SIGKILL in the middle, the same command finishes
them, and no game is played twice."""

from __future__ import annotations

import http.cookiejar
import re
import signal
import sqlite3
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from processes import live_children
from served import bot_folder
from test_serve import COMPETITION, Server, add_participant, taki

from referee.competition import kept_season
from referee.core import derive_seed
from referee.core.schedule import total_games

#: Three finalists at tables of two, four deals a table.
DEALS = 4
TOTAL = total_games(3, 2, DEALS)


class Browser:
    """A client with cookies, as a browser signs in and sends the pages' forms."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def get(self, path: str) -> str:
        with self.opener.open(self.url + path, timeout=30) as answer:
            return str(answer.read().decode())

    def post(self, path: str, fields: dict[str, str]) -> str:
        body = urllib.parse.urlencode(fields).encode()
        with self.opener.open(self.url + path, data=body, timeout=30) as answer:
            return str(answer.read().decode())

    @staticmethod
    def csrf(page: str) -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', page)
        assert found, page
        return found.group(1)


def finals_games(where: Path) -> list[str]:
    db = where / "competition-finals.sqlite"
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        try:
            return [row[0] for row in connection.execute("SELECT game_id FROM games")]
        except sqlite3.OperationalError:  # its tables are not made yet
            return []


@pytest.mark.slow
def test_finals_started_from_the_page_survive_a_kill_and_finish(tmp_path: Path) -> None:
    where = tmp_path
    (where / "competition.toml").write_text(COMPETITION)
    tokens = {name: add_participant(where, name) for name in ("alice", "bob", "carol")}
    server = Server(where)
    try:
        for seed, who in enumerate(tokens, 1):
            folder = bot_folder(where / who, f"{who}-bot", command=f"python random_bot.py {seed}")
            done = taki("submit", server.url, str(folder), "--token", tokens[who], cwd=where)
            assert "plays in the ladder" in done.stdout
        boss = Browser(server.url)
        signin = boss.get("/signin")
        token = (where / "organizer.token").read_text().strip()
        page = boss.post("/signin", {"csrf": Browser.csrf(signin), "token": token})
        assert "Start finals" in page  # the redirect lands on the organizer's page
        page = boss.post("/organizer/finals", {"csrf": Browser.csrf(page), "confirm": "yes",
                                               "deals": str(DEALS), "table_size": "2"})
        assert f"of {TOTAL} games played" in page
        deadline = time.monotonic() + 120
        while len(finals_games(where)) < 2:
            assert time.monotonic() < deadline, "".join(server.lines)
            assert server.process.poll() is None, "".join(server.lines)
            time.sleep(0.05)
    finally:
        server.stop(signal.SIGKILL)
    before = finals_games(where)
    assert 2 <= len(before) < TOTAL, f"{len(before)} of {TOTAL}: the kill came too late"
    time.sleep(1)
    assert live_children(zombies=False) == []
    server = Server(where)
    try:
        deadline = time.monotonic() + 240
        while "final standings" not in (public := Browser(server.url).get("/finals")):
            assert time.monotonic() < deadline, "".join(server.lines)
            assert server.process.poll() is None, "".join(server.lines)
            time.sleep(0.5)
        for who in tokens:
            assert f"{who}-bot@1" in public
        report = Browser(server.url).get("/finals/report/finals.html")
        assert "alice-bot@1" in report
    finally:
        code = server.stop()
    assert code in (0, 130), "".join(server.lines)
    games = finals_games(where)
    assert len(games) == len(set(games)) == TOTAL
    assert set(before) <= set(games)
    said = [line for line in server.lines if "the finals: " in line]
    assert said and said[0].startswith(f"the finals: {len(before)} of {TOTAL} games"), said
    assert (where / "competition-files" / "finals" / "finals.json").is_file()
    season = kept_season(where / "competition.sqlite")  # the finals' deals: the season's
    assert season is not None
    with sqlite3.connect(where / "competition-finals.sqlite") as finals:
        kept = finals.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()
    assert kept == (str(derive_seed(season.seed, "finals")),)
