"""The league report: ratings over growing prefixes, links to replays, the page's tables
and charts, and the page itself in Chromium for a league played by the sample bots.

The browser test uses Debian's Chromium at /usr/bin/chromium (``./tasks test`` installs
it); a missing browser fails it rather than skipping it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import attrs
import pytest

from referee.core.fairness import Blame, InfraEvent, WaitFigures
from referee.core.time_use import TimeUse
from referee.league.store import GameRecord, ResultStore, SeatRecord
from referee.present.report import load_report, rating_history, render_report, write_report
from referee.present.report_tables import _href, crosstable, games_table, locate_replay
from referee.ratings.elo import RatedGame, fit_elo
from referee.ratings.leaderboard import rate
from referee.rules import Rules

REPO = Path(__file__).resolve().parents[2]


def game(game_id: str, places: dict[str, int], *, replay: str | None = None,
         forfeit: tuple[str, str] | None = None) -> GameRecord:
    seats = tuple(
        SeatRecord(seat, bot, place, 10 * place,
                   forfeit[1] if forfeit and forfeit[0] == bot else None,
                   "detail" if forfeit and forfeit[0] == bot else None)
        for seat, (bot, place) in enumerate(places.items())
    )
    return GameRecord(game_id, game_id.rsplit("/", 1)[0], 1, 30, "win", seats, replay)


def small_db(path: Path, replays: list[str | None] | None = None) -> Path:
    """Six games of three bots, b forfeiting twice; ``replays`` paths per game."""
    replays = replays or [None] * 6
    games = [
        game("t/0", {"a": 1, "b": 2}, replay=replays[0]),
        game("t/1", {"a": 1, "c": 2}, replay=replays[1]),
        game("t/2", {"b": 1, "c": 2}, replay=replays[2]),
        game("t/3", {"a": 2, "b": 1}, replay=replays[3]),
        game("t/4", {"b": 2, "c": 1}, replay=replays[4], forfeit=("b", "timeout")),
        game("t/5", {"a": 1, "b": 2}, replay=replays[5], forfeit=("b", "crash")),
    ]
    with ResultStore(path) as store:
        for g in games:
            store.record(g)
    return path


# ------------------------------------------------------------------- pure parts


def test_history_refits_growing_prefixes() -> None:
    games = [RatedGame({"a": 1, "b": 2}), RatedGame({"b": 1, "c": 2}),
             RatedGame({"a": 1, "c": 2}), RatedGame({"c": 1, "a": 2})] * 10
    sizes, history = rating_history(games, points=20)
    assert sizes == [2 * i for i in range(1, 21)]
    assert set(history) == {"a", "b", "c"}
    assert all(len(series) == 20 for series in history.values())
    final = fit_elo(games)
    assert {name: series[-1] for name, series in history.items()} == pytest.approx(final)
    assert history["a"][0] == pytest.approx(fit_elo(games[:2])["a"])


def test_history_of_multiplayer_tables_ends_at_the_leaderboard() -> None:
    games = [RatedGame({"a": 1, "b": 2, "c": 3}), RatedGame({"c": 1, "a": 2, "b": 3}),
             RatedGame({"b": 1, "a": 2, "c": 3})] * 4
    _, history = rating_history(games, points=4)
    final = {bot.name: bot.elo for bot in rate(games, resamples=0).bots}
    assert {name: series[-1] for name, series in history.items()} == pytest.approx(final)


def test_history_starts_each_bot_at_its_first_game() -> None:
    games = [RatedGame({"a": 1, "b": 2})] * 3 + [RatedGame({"a": 1, "c": 2})] * 3
    sizes, history = rating_history(games, points=6)
    assert sizes == [1, 2, 3, 4, 5, 6]
    assert history["c"][:3] == [None, None, None]
    assert all(v is not None for v in history["c"][3:])


def test_history_with_fewer_games_than_points() -> None:
    sizes, _ = rating_history([RatedGame({"a": 1, "b": 2})] * 3, points=20)
    assert sizes == [1, 2, 3]
    assert rating_history([], points=20) == ([], {})


def test_replay_links_are_relative_to_the_page(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "league" / "replays").mkdir(parents=True)
    (tmp_path / "league" / "replays" / "g 1.json").write_text("{}")
    db = tmp_path / "league" / "results.sqlite"
    out = tmp_path / "site" / "reports"
    out.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)

    def link(stored: str) -> str:
        return _href(locate_replay(stored, db), out)

    # Stored relative to the directory the league ran in, absolute, or next to the database.
    assert link("league/replays/g 1.json") == "../../league/replays/g%201.json"
    assert link(str(tmp_path / "league" / "replays" / "g 1.json")) == (
        "../../league/replays/g%201.json")
    monkeypatch.chdir(out)
    assert link("replays/g 1.json") == "../../league/replays/g%201.json"


def test_the_page_shows_every_part(tmp_path: Path) -> None:
    data = load_report(small_db(tmp_path / "r.sqlite"), points=4)
    assert data.ratings is not None
    assert data.history_games == (2, 3, 4, 6)
    page = render_report(data, tmp_path)
    for bot in "abc":
        assert page.count(f'<g class="bot" data-bot="{bot}">') == 1
        assert page.count(f'<g class="series" data-bot="{bot}">') == 1
    assert re.search(r"<th>crash</th><th>timeout</th>", page)
    assert not re.search(r"https?://|<script|<link\b|@import|url\(", page)


def test_the_page_shows_each_bots_time_use(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    timed = game("t/0", {"a": 1, "b": 2})
    timed = attrs.evolve(timed, seats=(
        attrs.evolve(timed.seats[0], time=TimeUse((10.0, 30.0), 0)),
        attrs.evolve(timed.seats[1], time=TimeUse((480.0, 490.0, 20.0), 2)),
    ))
    with ResultStore(db) as store:
        store.record(timed)
    page = render_report(load_report(db), tmp_path)
    rows = dict(re.findall(r'<tr data-bot="(\w)"><td>\w</td>((?:<td class="num">[^<]*</td>)+)',
                           page.split('id="time-use"')[1]))
    cells = {bot: re.findall(r">([^<]*)<", row)[::2] for bot, row in rows.items()}
    assert cells == {"a": ["2", "20.0", "30.0", "30.0", "0"],
                     "b": ["3", "330.0", "490.0", "490.0", "2"]}
    untimed = render_report(load_report(small_db(tmp_path / "old.sqlite")), tmp_path)
    assert "No answer times recorded." in untimed


def test_an_empty_database_makes_a_page_that_says_so(tmp_path: Path) -> None:
    db = tmp_path / "empty.sqlite"
    ResultStore(db).close()
    out = tmp_path / "report.html"
    write_report(db, out)
    assert "No games in the database yet." in out.read_text()


def test_names_are_escaped(tmp_path: Path) -> None:
    db = tmp_path / "x.sqlite"
    with ResultStore(db) as store:
        store.record(game("x/0", {"<b>&": 1, "z": 2}))
        store.record(game("x/1", {"<b>&": 2, "z": 1}))
    page = render_report(load_report(db), tmp_path)
    assert "<b>&" not in page
    assert "&lt;b&gt;&amp;" in page


# --------------------------------------------------------------------- browser


def referee_command() -> list[str]:
    script = Path(sys.executable).parent / "taki-referee"
    return [str(script)] if script.exists() else [sys.executable, "-m", "referee.cli"]


LEAGUE = """\
[league]
table_size = 2
deals = 2
seed = 3
concurrency = 3
replay_dir = "replays"

[time]
move_ms = 5000
reaction_ms = 5000

[[bots]]
name = "greedy"
command = "python {repo}/sample_bots/greedy_bot.py"

[[bots]]
name = "random"
command = "python {repo}/sample_bots/random_bot.py 1"

[[bots]]
name = "random-2"
command = "python {repo}/sample_bots/random_bot.py 2"
"""


def test_report_of_a_league_in_the_browser(open_page: Any, tmp_path: Path) -> None:
    league = tmp_path / "league.toml"
    league.write_text(textwrap.dedent(LEAGUE.format(repo=REPO)))
    db = tmp_path / "results.sqlite"
    run = [*referee_command(), "league", str(league), "--db", str(db),
           "--log-dir", str(tmp_path / "logs"), "--json"]
    subprocess.run(run, cwd=tmp_path, check=True, capture_output=True, timeout=60)
    replays = sorted((tmp_path / "replays").glob("*.json"))
    assert len(replays) == 12
    # One replay also rendered: the report links its page too.
    subprocess.run([*referee_command(), "replay", "render", str(replays[0])],
                   check=True, capture_output=True, timeout=60)
    out = tmp_path / "site" / "report.html"
    out.parent.mkdir()
    done = subprocess.run([*referee_command(), "report", str(db), "-o", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr

    page, problems = open_page(out, width=1300, height=900)

    bots = {"greedy", "random", "random-2"}
    chart_bots = page.locator("#elo-chart g.bot").evaluate_all(
        "gs => gs.map(g => g.dataset.bot)")
    assert set(chart_bots) == bots
    assert page.locator("#elo-chart g.bot circle.elo").count() == 3
    assert page.locator("#elo-chart g.bot line.ci").count() == 3
    series = page.locator("#history-chart g.series")
    assert series.count() == 3
    for i in range(3):
        points = series.nth(i).locator("polyline").get_attribute("points")
        assert points is not None and len(points.split()) >= 2
    board = page.locator("#leaderboard tbody tr")
    assert board.count() == 3
    assert set(board.evaluate_all("rows => rows.map(r => r.dataset.bot)")) == bots
    assert chart_bots == board.evaluate_all("rows => rows.map(r => r.dataset.bot)")
    assert page.locator("#crosstable tbody tr").count() == 3
    assert page.locator("#games tbody tr").count() == 12
    assert page.inner_text("#forfeits") == "No forfeits."

    hrefs = page.locator("#games a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert len(hrefs) == 13  # a json link per game, and the rendered page
    for href in hrefs:
        assert not href.startswith(("/", "file:")), href
        assert (out.parent / href).resolve().exists(), href
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)

    # Follow the link to the rendered replay: the viewer opens at its first step.
    page.locator("#games a", has_text="view").click()
    page.wait_for_selector("#step-no")
    assert page.inner_text("#step-no").startswith("step 0 /")
    assert problems == []
    page.close()


# ------------------------------------------------------------- a report to publish


def test_the_header_names_the_rules_the_time_control_and_the_dates(tmp_path: Path) -> None:
    db = small_db(tmp_path / "r.sqlite")
    with ResultStore(db) as store:
        store.note("rules", json.dumps(Rules.preset("super-taki-2018", pyramid=True).to_wire()))
        store.note("time", json.dumps({"move_ms": 500, "bank_ms": 9000, "increment_ms": 50,
                                       "reaction_ms": 700}))
    out = tmp_path / "site" / "index.html"
    out.parent.mkdir()
    write_report(db, out, title="Spring Cup 2026")
    page = out.read_text()
    assert "<title>Spring Cup 2026</title>" in page and "<h1>Spring Cup 2026</h1>" in page
    assert "rules: super-taki-2018 (pyramid on)" in page
    assert "time control: 500 ms a move, bank 9000 ms + 50 ms a move, 700 ms a reaction" in page
    assert re.search(r"6 games from .*, played \d{4}-\d\d-\d\d \d\d:\d\d to "
                     r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", page)


def test_each_bot_has_a_page(tmp_path: Path) -> None:
    db = small_db(tmp_path / "r.sqlite")
    out = tmp_path / "report.html"
    write_report(db, out)
    page = out.read_text()
    for bot in "abc":
        assert f'<a href="report-bots/{bot}.html">{bot}</a>' in page
    bot_page = (tmp_path / "report-bots" / "b.html").read_text()
    assert '<a href="../report.html">' in bot_page
    assert re.search(r'<p id="rating">rank \d of 3, Elo -?\d+', bot_page)
    # b played five of the six games, and forfeited two of them.
    assert "<h2>Games (5)</h2>" in bot_page
    assert "<th>crash</th><th>timeout</th>" in bot_page


def test_versions_link_to_each_other(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.record(game("t/0", {"greedy@1": 1, "random": 2}))
        store.record(game("t/1", {"greedy@2": 1, "random": 2}))
        store.record(game("t/2", {"greedy@2": 2, "greedy@1": 1}))
    write_report(db, tmp_path / "report.html")
    page = (tmp_path / "report-bots" / "greedy@2.html").read_text()
    assert 'versions: <a href="greedy%401.html">greedy@1</a>, greedy@2' in page


def test_games_are_listed_by_deal_in_pages(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    ids = [f"a,b/deal{d}/rot{r}" for d in (10, 2, 1, 9) for r in (1, 0)]
    with ResultStore(db) as store:
        for game_id in ids:
            store.record(game(game_id, {"a": 1, "b": 2}))
    data = load_report(db)
    html = games_table(data.games, db, tmp_path, per_page=3)
    listed = re.findall(r"<td>(a,b/deal\d+/rot\d)</td>", html)
    assert listed == sorted(ids, key=lambda i: (int(i.split("deal")[1].split("/")[0]), i))
    assert html.count("<details") == 3 and html.count("<details open>") == 1
    assert "<summary>games 7 to 8 of 8</summary>" in html


def test_a_crosstable_of_many_bots_has_numbered_columns(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    bots = [f"bot{i}" for i in range(8)]
    with ResultStore(db) as store:
        for i, a in enumerate(bots):
            for b in bots[i + 1:]:
                store.record(game(f"{a},{b}/deal0/rot0", {a: 1, b: 2}))
    data = load_report(db)
    assert data.ratings is not None
    html = crosstable(data.ratings)
    assert '<th title="bot0">' in html and "<th>bot0</th>" not in html
    assert 'id="crosstable-legend"' in html and "1 bot0" in html
    small = load_report(small_db(tmp_path / "s.sqlite"))
    assert small.ratings is not None and "crosstable-legend" not in crosstable(small.ratings)


def test_report_replays_renders_the_pages_its_game_list_links(tmp_path: Path) -> None:
    from test_replay_page import timed_replay  # a replay with answer times and a crash

    replays = tmp_path / "replays"
    paths = []
    for k in range(3):
        replay = timed_replay(crash_at=20 + k)
        path = replays / f"g{k}.json"
        replay.save(path)
        paths.append(str(path))
    db = small_db(tmp_path / "r.sqlite", replays=[*paths, None, None, None])
    out = tmp_path / "report.html"
    command = [str(Path(sys.executable).with_name("taki-referee")), "report", str(db), "-o",
               str(out), "--replays"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 replay pages written" in done.stderr
    page = out.read_text()
    for k in range(3):
        assert (replays / f"g{k}.html").is_file()
        assert f'<a href="replays/g{k}.html">view</a>' in page
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert "0 replay pages written" in again.stderr  # pages newer than their replays stay


# ------------------------------------------------------------------ voided games

def _event(game_id: str, attempt: int) -> InfraEvent:
    figures = WaitFigures(window_ms=50.0, wait_ms=1050.0, cpu_ms=3.0, run_delay_ms=45.0,
                          runnable=True, load_per_cpu=8.5, cpu_pressure=1.0)
    return InfraEvent(game_id, attempt, 0, "b", Blame.STARVED, "no answer within 100 ms",
                      figures)


def test_the_page_counts_and_shows_voided_games_with_their_faults(tmp_path: Path) -> None:
    """A game voided every time is counted in the header and listed as voided; every
    voided play shows its infrastructure fault's figures under its game."""
    db = small_db(tmp_path / "r.sqlite")
    voided = GameRecord("t/6", "t", 1, 0, None, (), infra=(_event("t/6", 0), _event("t/6", 1)),
                        voided=True)
    replayed = attrs.evolve(game("t/7", {"a": 1, "c": 2}), infra=(_event("t/7", 0),))
    with ResultStore(db) as store:
        store.record(voided)
        store.record(replayed)
    data = load_report(db)
    assert [g.game_id for g in data.voided] == ["t/6"]
    assert data.void_plays == 3
    page = render_report(data, tmp_path)
    header = page.split("</header>")[0]
    assert "7 games, 1 voided from" in header
    games = page.split('id="games"')[1]
    row = re.search(r'<tr class="voided">.*?</tr>', games)
    assert row is not None and "t/6" in row.group(0) and "voided: no result" in row.group(0)
    assert "played again after 1 voided play" in games
    faults = re.findall(r'<tr class="infra">.*?</tr>', games)
    assert len(faults) == 3
    assert all("starved of CPU" in f and "its processes used 3 ms of CPU" in f and
               "waited 1050 ms" in f and "load 8.5 per CPU" in f for f in faults)
    assert "3 plays voided by infrastructure faults" in page
    assert "1 game voided every time" in page
    # The voided game is not rated: the leaderboard counts the games with a result.
    assert data.ratings is not None and sum(b.games for b in data.ratings.bots) == 14


def test_a_database_of_voided_games_only_lists_them(tmp_path: Path) -> None:
    db = tmp_path / "v.sqlite"
    with ResultStore(db) as store:
        store.record(GameRecord("v/0", "v", 1, 0, None, (), infra=(_event("v/0", 0),),
                                voided=True))
    page = render_report(load_report(db), tmp_path)
    assert "No games in the database yet." in page
    assert "0 games, 1 voided from" in page
    assert '<tr class="voided">' in page and "starved of CPU" in page
