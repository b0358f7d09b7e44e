"""The finals from the organizer's page: the form (the organizer's alone, with its CSRF
token) closes submissions, pauses the ladder for good and keeps the finals' plan; the
public finals page shows their progress, then the standings and the report's files."""

from __future__ import annotations

import json
import re

import trio
from pages_helpers import Browsers, csrf_of, entrant, sign_in
from served import Served

from referee.competition.finals import FinalStanding
from referee.competition.finals_plan import FinalsPlan
from referee.competition.planned_finals import FinalsPhase, FinalsProgress, finals_folder
from referee.server.finals_link import run_finals_link


async def test_the_organizer_starts_the_finals_once_and_the_ladder_stays_paused(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ant"), entrant(served, "bob", "bee")
    boss = browsers.new()
    await sign_in(boss, served.organizer)
    page = await boss.get("/organizer")
    assert 'action="/organizer/finals"' in page.text and "Start finals" in page.text
    csrf = csrf_of(page.text)
    unconfirmed = await boss.post("/organizer/finals",
                                  data={"csrf": csrf, "deals": "3", "table_size": "2"})
    assert unconfirmed.status_code == 400 and "tick the box to confirm" in unconfirmed.text
    store = served.state.store
    assert store.finals_plan() is None and not store.frozen() and not store.paused()
    started = await boss.post("/organizer/finals", data={
        "csrf": csrf, "deals": "3", "table_size": "2", "confirm": "yes"})
    assert started.status_code == 303 and started.headers["location"] == "/organizer"
    store = served.state.store
    assert store.frozen() and store.paused()
    assert store.finals_plan() == FinalsPlan((a, b), 3, 2)
    assert served.state.finals.phase is FinalsPhase.PLAYING
    assert served.state.finals.begun.is_set()
    # Started again (another tab, say): the first plan stays.
    again = await boss.post("/organizer/finals", data={
        "csrf": csrf, "deals": "7", "table_size": "2", "confirm": "yes"})
    assert again.status_code == 303 and store.finals_plan() == FinalsPlan((a, b), 3, 2)
    resumed = await boss.post("/organizer/ladder", data={"csrf": csrf, "action": "resume"})
    assert resumed.status_code == 409 and "the finals have begun" in resumed.text
    assert store.paused()
    api = await served.client.post("/api/ladder/resume",
                                   headers={"Authorization": f"Bearer {served.organizer}"})
    assert api.status_code == 409 and store.paused()
    shown = await boss.get("/organizer")
    assert "Start finals" not in shown.text and "0 of 12 games played" not in shown.text
    # The ladder stays stopped: the page offers no "Resume the ladder" (it would be 409).
    assert "Resume the ladder" not in shown.text and 'action="/organizer/ladder"' not in shown.text
    assert "The ladder stopped for the finals." in shown.text
    assert f"{a}, {b}" in shown.text


async def test_finals_without_enough_finalists_or_with_bad_numbers_are_refused(
        served: Served, browsers: Browsers) -> None:
    entrant(served, "alice", "ant")
    boss = browsers.new()
    await sign_in(boss, served.organizer)
    csrf = csrf_of((await boss.get("/organizer")).text)
    for fields, says in (({}, "at least 2 participants"),
                         ({"deals": "x1"}, "not a whole number"),
                         ({"deals": "0"}, "deals must be between 1"),
                         ({"table_size": "11"}, "table size must be between 2 and 10")):
        answer = await boss.post("/organizer/finals",
                                 data={"csrf": csrf, "confirm": "yes", **fields})
        assert answer.status_code == 400 and says in answer.text, (fields, answer.text)
    store = served.state.store
    assert store.finals_plan() is None and not store.frozen() and not store.paused()
    assert served.state.finals.phase is FinalsPhase.NOT_BEGUN


async def test_only_the_organizer_starts_the_finals(served: Served, browsers: Browsers
                                                    ) -> None:
    entrant(served, "alice", "ant")
    entrant(served, "bob", "bee")
    visitor, alice = browsers.new(), browsers.new()
    await sign_in(alice, served.tokens["alice"])
    csrf = csrf_of((await alice.get("/me")).text)
    assert (await alice.post("/organizer/finals", data={"csrf": csrf})).status_code == 403
    await visitor.get("/signin")
    assert (await visitor.post("/organizer/finals", data={"csrf": "x" * 43})).status_code == 401
    assert served.state.store.finals_plan() is None and not served.state.store.frozen()


async def test_the_finals_page_shows_progress_then_escaped_standings_and_the_report(
        served: Served, browsers: Browsers) -> None:
    web = browsers.new()
    assert "have not begun" in (await web.get("/finals")).text
    progress = served.state.finals
    progress.phase, progress.total = FinalsPhase.PLAYING, 12
    progress.plan = FinalsPlan(("ant@1", "bee@1"), 6, 2)
    page = await web.get("/finals")
    assert "0 of 12 games played" in page.text
    assert re.sub(r"<[^>]+>", "", page.text).count("ant@1, bee@1") == 1
    progress.phase = FinalsPhase.DONE
    progress.standings = (FinalStanding(1, "<script>x</script>", 1510.4, 1490.0, 1530.0, 12,
                                        0.75),)
    page = await web.get("/finals")
    assert "<script>x</script>" not in page.text
    assert "&lt;script&gt;x&lt;/script&gt;" in page.text and "1510" in page.text
    assert (await web.get("/finals/report/finals.html")).status_code == 404
    folder = finals_folder(served.state.workspace)
    folder.mkdir(parents=True)
    (folder / "finals.html").write_text("<h1>the finals' report</h1>")
    (folder / "finals.json").write_text(json.dumps({"standings": []}))
    report = await web.get("/finals/report/finals.html")
    assert report.status_code == 200 and "the finals' report" in report.text
    assert (await web.get("/finals/report/../../competition.sqlite")).status_code == 404


async def test_finals_played_before_a_restart_are_shown_and_not_played_again(
        served: Served) -> None:
    store = served.state.store
    plan = FinalsPlan(("ant@1", "bee@1"), 1, 2)
    store.begin_finals(plan)
    store.finish_finals()
    folder = finals_folder(served.state.workspace)
    folder.mkdir(parents=True)
    row = FinalStanding(1, "ant@1", 1520.0, 1500.0, 1540.0, 2, 1.0)
    (folder / "finals.json").write_text(json.dumps({"standings": [row.to_json()]}))
    progress = FinalsProgress()
    said: list[str] = []
    with trio.fail_after(10):  # returns at once: nothing is played
        await run_finals_link(served.state.config, store, served.state.workspace, progress,
                              say=said.append)
    assert progress.phase is FinalsPhase.DONE and progress.standings == (row,)
    assert progress.plan == plan and progress.total == 2 and said == []


async def test_the_final_standings_name_each_participant_and_link_their_games(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ant"), entrant(served, "bob", "bee")
    progress = served.state.finals
    progress.phase, progress.total = FinalsPhase.PLAYING, 2
    progress.plan = FinalsPlan((a, b), 1, 2)
    web = browsers.new()
    playing = (await web.get("/finals")).text
    assert f'<a href="/bots/{a.replace("@", "%40")}">{a}</a> (alice)' in playing
    progress.phase = FinalsPhase.DONE
    progress.standings = (FinalStanding(1, b, 1520.0, 1500.0, 1540.0, 2, 1.0),
                          FinalStanding(2, a, 1480.0, 1460.0, 1500.0, 2, 0.0))
    page = (await web.get("/finals")).text
    rows = re.findall(r'<td><a href="([^"]+)"[^>]*>([^<]+)</a></td><td>([^<]+)</td>', page)
    assert [(bot, who) for _, bot, who in rows] == [(b, "bob"), (a, "alice")]
    link = rows[0][0]
    assert link.startswith("/finals/report/")
    # The link is the finals report's page of that bot (written with the report).
    pages = finals_folder(served.state.workspace) / "finals-bots"
    pages.mkdir(parents=True)
    (pages / f"{b}.html").write_text("<h1>bee's finals games</h1>")
    assert "bee's finals games" in (await web.get(link)).text
