"""What a participant downloads: a game's replay as JSON (anyone; forfeit details cut
to their first line, as on the viewer) and their own bots' whole stderr logs (their
owner alone: 403 for the other participants, the organizer and visitors)."""

from __future__ import annotations

import json

from pages_helpers import Browsers, add_game, entrant, sign_in
from served import Served

from referee.core.replay import Replay


async def test_a_log_downloads_whole_for_its_owner_alone(served: Served,
                                                         browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    noise = "x" * 100_000 + "\nthe end\n"  # more than a page shows
    add_game(served, (a, b), 0, log={a: noise, b: "bob's secret"})
    alice, bob, nobody, boss = (browsers.new() for _ in range(4))
    await sign_in(alice, served.tokens["alice"])
    await sign_in(bob, served.tokens["bob"])
    await sign_in(boss, served.organizer)
    page = await alice.get("/games/1/seats/0/log")
    assert 'href="/games/1/seats/0/log.txt"' in page.text
    mine = await alice.get("/games/1/seats/0/log.txt")
    assert mine.status_code == 200
    assert mine.headers["content-type"].startswith("text/plain")
    assert mine.headers["content-disposition"] == 'attachment; filename="game1-seat0.log"'
    assert mine.text.endswith(noise) and mine.text.startswith("==> ")
    for client in (bob, nobody, boss):
        refused = await client.get("/games/1/seats/0/log.txt")
        assert refused.status_code == 403
        assert "x" * 100 not in refused.text
    assert (await alice.get("/games/1/seats/1/log.txt")).status_code == 403
    assert (await bob.get("/games/1/seats/1/log.txt")).text.endswith("bob's secret\n")
    assert (await alice.get("/games/1/seats/7/log.txt")).status_code == 404
    assert (await alice.get("/games/9/seats/0/log.txt")).status_code == 404


async def test_an_empty_log_says_so_rather_than_show_an_empty_box(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0, log={a: ""})
    alice = browsers.new()
    await sign_in(alice, served.tokens["alice"])
    page = await alice.get("/games/1/seats/0/log")
    assert page.status_code == 200
    assert '<pre class="log">' not in page.text
    assert "Empty: the bot wrote nothing to stderr here." in page.text


async def test_a_replay_downloads_as_json_with_forfeit_details_cut(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0, forfeit=(1, "the bot exited\nits stderr: secret"),
             replay=True)
    add_game(served, (a, b), 1)
    web = browsers.new()
    page = await web.get("/games/1")
    assert 'href="/games/1/replay.json"' in page.text
    answer = await web.get("/games/1/replay.json")
    assert answer.status_code == 200
    assert answer.headers["content-disposition"] == 'attachment; filename="game1.json"'
    replay = Replay.from_wire(json.loads(answer.text))  # the replay format, checked
    assert replay.game_id == f"{a},{b}/deal0/rot0" and replay.bots == [a, b]
    assert "secret" not in answer.text and "the bot exited" in answer.text
    assert (await web.get("/games/2/replay.json")).status_code == 404  # none kept
    assert 'replay.json' not in (await web.get("/games/2")).text
    assert (await web.get("/games/3/replay.json")).status_code == 404


async def test_my_page_lists_my_recent_games_and_errors_with_my_logs(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0)
    add_game(served, (a, b), 1, forfeit=(0, "the bot exited with status 1\nTraceback"))
    add_game(served, (b, a), 2, forfeit=(0, "bob's bot timed out"))
    alice, bob = browsers.new(), browsers.new()
    await sign_in(alice, served.tokens["alice"])
    await sign_in(bob, served.tokens["bob"])
    page = (await alice.get("/me")).text
    games = page[page.index('id="recent-games"'):page.index("</table>",
                                                             page.index('id="recent-games"'))]
    assert games.index("/games/3") < games.index("/games/2") < games.index("/games/1")
    assert 'href="/games/3/seats/1/log"' in games and "/seats/0/log" not in games.split(
        "/games/3")[1].split("</tr>")[0]
    errors = page[page.index('id="recent-errors"'):]
    errors = errors[:errors.index("</table>")]
    assert "the bot exited with status 1" in errors and "Traceback" not in errors
    assert 'href="/games/2/seats/0/log.txt"' in errors
    assert "bob's bot timed out" not in errors  # bob's forfeit is not alice's error
    assert "bob&#39;s bot timed out" in (await bob.get("/me")).text


async def test_a_restarted_bots_log_shows_when_its_first_start_left_none(
        served: Served, browsers: Browsers) -> None:
    # The ladder keeps no empty log: a first start that wrote nothing left no file,
    # and the restart's log (".1") is still the seat's.
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    add_game(served, (a, b), 0, log={a: "the first start"})
    first = next((served.state.workspace.root / "logs").glob("*.log"))
    first.rename(first.with_name(first.name.removesuffix(".log") + ".1.log"))
    alice = browsers.new()
    await sign_in(alice, served.tokens["alice"])
    assert "the first start" in (await alice.get("/games/1/seats/0/log")).text
    whole = await alice.get("/games/1/seats/0/log.txt")
    assert whole.text.endswith("the first start\n") and ".1.log <==" in whole.text
