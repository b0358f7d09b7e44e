"""Signing in, the participant's and the organizer's pages, and their security: cookies
scripts cannot read and other sites never send, a CSRF token on every form, no secret in
a URL, and each participant's logs their own."""

from __future__ import annotations

import re

import httpx
from pages_helpers import Browsers, add_game, csrf_of, entrant, sign_in
from served import Served, bot_folder, targz

#: Every form of the pages, with the fields it sends besides its CSRF token.
FORMS = {
    "/signout": {},
    "/me/token": {},
    "/organizer/participants": {"name": "mallory"},
    "/organizer/disable": {"name": "bob", "confirm": "yes"},
    "/organizer/enable": {"name": "bob"},
    "/organizer/ladder": {"action": "pause"},
    "/organizer/freeze": {},
    "/organizer/season": {"confirm": "yes"},
    "/organizer/finals": {"deals": "1", "table_size": "2", "confirm": "yes"},
}


def cookie_flags(response: httpx.Response, name: str) -> str:
    header = next(h for h in response.headers.get_list("set-cookie")
                  if h.startswith(f"{name}="))
    return header.lower()


async def test_signing_in_sets_a_strict_httponly_cookie_and_no_secret_in_a_url(
        served: Served, browsers: Browsers) -> None:
    web = browsers.new()
    form = await web.get("/signin")
    assert 'method="post" action="/signin"' in form.text
    visitor = cookie_flags(form, "taki_visitor")
    assert "httponly" in visitor and "samesite=strict" in visitor and "secure" not in visitor
    answer = await sign_in(web, served.tokens["alice"])
    assert answer.status_code == 303 and answer.headers["location"] == "/me"
    flags = cookie_flags(answer, "taki_session")
    assert "httponly" in flags and "samesite=strict" in flags and "secure" not in flags
    assert served.tokens["alice"] not in flags
    me = await web.get("/me")
    assert me.status_code == 200 and "alice's bots" in me.text
    assert me.headers["cache-control"] == "no-store"
    assert served.tokens["alice"] not in me.text
    assert not re.search(r'<form method="get"[^>]*>[^<]*<input[^>]*name="token"', me.text)
    tls = browsers.new("https://competition.test")
    answer = await sign_in(tls, served.tokens["alice"])
    assert "; secure" in cookie_flags(answer, "taki_session")


async def test_a_wrong_token_or_a_form_without_its_csrf_token_signs_nobody_in(
        served: Served, browsers: Browsers) -> None:
    web = browsers.new()
    wrong = await sign_in(web, "0" * 64)
    assert wrong.status_code == 401 and "invalid token" in wrong.text
    assert "taki_session" not in wrong.headers.get("set-cookie", "")
    forged = browsers.new()  # another site's form: no visitor cookie, no token
    answer = await forged.post("/signin", data={"token": served.tokens["alice"]})
    assert answer.status_code == 403
    await forged.get("/signin")
    answer = await forged.post("/signin", data={"token": served.tokens["alice"],
                                                "csrf": "x" * 43})
    assert answer.status_code == 403
    assert (await forged.get("/me")).status_code == 401


async def test_every_form_is_refused_without_its_csrf_token_and_changes_nothing(
        served: Served, browsers: Browsers) -> None:
    alice, boss = browsers.new(), browsers.new()
    await sign_in(alice, served.tokens["alice"])
    await sign_in(boss, served.organizer)
    store = served.state.store
    before = ([p.name for p in store.participants()], store.paused(), store.frozen(),
              store.season_ended())
    for url, fields in FORMS.items():
        for client in (alice, boss):
            for csrf in (None, "forged-" + "x" * 40):
                data = dict(fields) | ({} if csrf is None else {"csrf": csrf})
                answer = await client.post(url, data=data)
                assert answer.status_code in (401, 403), (url, answer.status_code)
    body = targz(bot_folder(served.tmp / "bot", "formbot"))
    answer = await alice.post("/me/upload", files={"archive": ("bot.tar.gz", body)},
                              data={"csrf": "forged"})
    assert answer.status_code == 403
    assert ([p.name for p in store.participants()], store.paused(), store.frozen(),
            store.season_ended()) == before
    assert store.finals_plan() is None
    assert store.submissions() == []
    assert (await httpx_api_ok(served, "alice"))
    assert (await alice.get("/me")).status_code == 200  # still signed in


async def httpx_api_ok(served: Served, who: str) -> bool:
    answer = await served.client.get("/api/submissions", headers=served.auth(who))
    return answer.status_code == 200


async def test_a_participant_uploads_through_the_form_and_watches_the_check(
        served: Served, browsers: Browsers) -> None:
    web = browsers.new()
    await sign_in(web, served.tokens["alice"])
    page = await web.get("/me")
    body = targz(bot_folder(served.tmp / "bot", "formbot"))
    answer = await web.post("/me/upload", files={"archive": ("bot.tar.gz", body)},
                            data={"csrf": csrf_of(page.text)})
    assert answer.status_code == 303, answer.text
    sub = served.state.store.submissions("alice")[0]
    await served.settled("alice", sub.id)
    rows = await web.get("/live/me")
    assert 'class="status-active"' in rows.text and "formbot@1" in rows.text
    bad = await web.post("/me/upload", files={"archive": ("x.tar.gz", b"not an archive")},
                         data={"csrf": csrf_of(page.text)})
    assert bad.status_code == 400 and 'id="problem"' in bad.text


def upload_key_of(page: str) -> str:
    match = re.search(r'name="upload_key" value="([^"]+)"', page)
    assert match is not None, "the upload form carries no key"
    return match.group(1)


async def test_the_same_upload_form_sent_twice_makes_one_submission(
        served: Served, browsers: Browsers) -> None:
    """A double click, or the form sent again after the server restarted before it
    answered: the form's key names the upload, and the second one is dropped."""
    web = browsers.new()
    await sign_in(web, served.tokens["alice"])
    page = await web.get("/me")
    key = upload_key_of(page.text)
    body = targz(bot_folder(served.tmp / "bot", "twice"))
    fields = {"csrf": csrf_of(page.text), "upload_key": key}
    for _ in range(2):
        answer = await web.post("/me/upload", files={"archive": ("bot.tar.gz", body)},
                                data=fields)
        assert answer.status_code == 303, answer.text
    assert len(served.state.store.submissions("alice")) == 1
    # A new rendering of the form is a new upload.
    again = await web.get("/me")
    assert upload_key_of(again.text) != key
    bad = await web.post("/me/upload", files={"archive": ("bot.tar.gz", body)},
                         data={**fields, "upload_key": "short"})
    assert bad.status_code == 400 and "key must be 16 to 128" in bad.text
    assert len(served.state.store.submissions("alice")) == 1


async def test_a_rejected_submission_shows_its_step_and_output_escaped(
        served: Served, browsers: Browsers) -> None:
    build = "echo '<script>alert(3)</script>'; exit 3"
    answer = await served.upload("alice", targz(bot_folder(served.tmp / "bot", "broken",
                                                           build=build)))
    done = await served.settled("alice", answer.json()["submission"]["id"])
    assert done["status"] == "rejected"
    web = browsers.new()
    await sign_in(web, served.tokens["alice"])
    page = await web.get("/me")
    assert "rejected at its build" in page.text
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in page.text
    assert "<script>alert(3)" not in page.text
    boss = browsers.new()  # the organizer sees why too
    await sign_in(boss, served.organizer)
    page = await boss.get("/organizer")
    assert "at its build<details><summary>output</summary>" in page.text
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in page.text
    assert "<script>alert(3)" not in page.text


async def test_rotating_the_token_shows_the_new_one_once_and_ends_the_old_one(
        served: Served, browsers: Browsers) -> None:
    web, other = browsers.new(), browsers.new()
    await sign_in(web, served.tokens["alice"])
    await sign_in(other, served.tokens["alice"])
    page = await web.get("/me")
    answer = await web.post("/me/token", data={"csrf": csrf_of(page.text)})
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
    token = re.search(r'<div class="token" id="new-token"><p>[^<]*</p><pre>(\w+)</pre>',
                      answer.text)
    assert token is not None and token.group(1) != served.tokens["alice"]
    assert not await httpx_api_ok(served, "alice")
    served.tokens["alice"] = token.group(1)
    assert await httpx_api_ok(served, "alice")
    assert (await other.get("/me")).status_code == 401
    assert token.group(1) not in (await web.get("/me")).text


async def test_logs_are_their_owners_alone_bounded_and_escaped(
        served: Served, browsers: Browsers) -> None:
    a, b = entrant(served, "alice", "ace"), entrant(served, "bob", "bee")
    noise = "x" * 100_000 + "\n<script>alert(4)</script> the end\n"
    add_game(served, (a, b), 0, log={a: noise, b: "bob's secret"})
    alice, bob, nobody, boss = (browsers.new() for _ in range(4))
    await sign_in(alice, served.tokens["alice"])
    await sign_in(bob, served.tokens["bob"])
    await sign_in(boss, served.organizer)
    game = await alice.get("/games/1")
    assert 'href="/games/1/seats/0/log"' in game.text
    assert 'href="/games/1/seats/1/log"' not in game.text
    mine = await alice.get("/games/1/seats/0/log")
    assert mine.status_code == 200
    assert "&lt;script&gt;alert(4)&lt;/script&gt; the end" in mine.text
    assert "<script>alert(4)" not in mine.text
    assert len(mine.text) < 80_000 and "bytes are left out" in mine.text
    for client in (bob, nobody, boss):
        refused = await client.get("/games/1/seats/0/log")
        assert refused.status_code == 403
        assert "x" * 1000 not in refused.text
    assert (await alice.get("/games/1/seats/1/log")).status_code == 403
    assert "bob&#39;s secret" in (await bob.get("/games/1/seats/1/log")).text


async def test_the_organizer_adds_participants_pauses_and_closes_submissions(
        served: Served, browsers: Browsers) -> None:
    boss = browsers.new()
    assert (await boss.get("/organizer")).status_code == 401
    await sign_in(boss, served.organizer)
    page = await boss.get("/organizer")
    assert page.status_code == 200 and "games and" in page.text and "load" in page.text
    added = await boss.post("/organizer/participants",
                            data={"csrf": csrf_of(page.text), "name": "carol"})
    token = re.search(r"token \(shown this once[^<]*</p><pre>(\w+)</pre>", added.text)
    assert token is not None
    carol = browsers.new()
    assert (await sign_in(carol, token.group(1))).headers["location"] == "/me"
    twice = await boss.post("/organizer/participants",
                            data={"csrf": csrf_of(page.text), "name": "carol"})
    assert twice.status_code == 400 and "exists already" in twice.text
    await boss.post("/organizer/ladder", data={"csrf": csrf_of(page.text), "action": "pause"})
    assert served.state.store.paused()
    await boss.post("/organizer/ladder", data={"csrf": csrf_of(page.text), "action": "resume"})
    assert not served.state.store.paused()
    unconfirmed = await boss.post("/organizer/disable",
                                  data={"csrf": csrf_of(page.text), "name": "carol"})
    assert unconfirmed.status_code == 400 and "tick the box to confirm" in unconfirmed.text
    assert (await carol.get("/me")).status_code == 200
    await boss.post("/organizer/disable", data={"csrf": csrf_of(page.text), "name": "carol",
                                                "confirm": "yes"})
    assert (await carol.get("/me")).status_code == 403
    shown = await boss.get("/organizer")
    assert 'action="/organizer/enable"' in shown.text
    await boss.post("/organizer/enable", data={"csrf": csrf_of(page.text), "name": "carol"})
    assert (await carol.get("/me")).status_code == 401  # the old session stays ended
    assert (await sign_in(carol, token.group(1))).headers["location"] == "/me"
    await boss.post("/organizer/disable", data={"csrf": csrf_of(page.text), "name": "carol",
                                                "confirm": "yes"})
    await boss.post("/organizer/freeze", data={"csrf": csrf_of(page.text)})
    assert served.state.store.frozen()
    alice = browsers.new()
    await sign_in(alice, served.tokens["alice"])
    assert "Submissions are closed" in (await alice.get("/me")).text
    assert (await alice.get("/organizer")).status_code == 403


async def test_the_organizer_ends_the_season_and_the_page_shows_its_seed_and_the_check(
        served: Served, browsers: Browsers) -> None:
    season = await served.state.open_season()  # as serve does when it starts
    boss = browsers.new()
    await sign_in(boss, served.organizer)
    page = await boss.get("/organizer")
    assert season.commitment in page.text and str(season.seed) not in page.text
    unconfirmed = await boss.post("/organizer/season", data={"csrf": csrf_of(page.text)})
    assert unconfirmed.status_code == 400 and "tick the box to confirm" in unconfirmed.text
    assert served.state.store.season_ended() is None
    ended = await boss.post("/organizer/season",
                            data={"csrf": csrf_of(page.text), "confirm": "yes"})
    assert ended.status_code == 303
    store = served.state.store
    assert store.season_ended() is not None and store.paused() and store.frozen()
    shown = (await boss.get("/organizer")).text
    assert f'<code id="season-seed">{season.seed}</code>' in shown
    assert (f"taki-referee verify-season --seed {season.seed} --salt {season.salt}"
            f" --commitment {season.commitment}") in shown
    assert 'action="/organizer/season"' not in shown
    public = (await served.client.get("/api/competition")).json()["season"]
    assert public["seed"] == str(season.seed) and public["salt"] == season.salt
    resumed = await boss.post("/organizer/ladder",
                              data={"csrf": csrf_of(page.text), "action": "resume"})
    assert resumed.status_code == 409 and "the season has ended" in resumed.text
    upload = await served.upload("alice", targz(bot_folder(served.tmp / "late", "late")))
    assert upload.status_code == 409 and "submissions are closed" in upload.text
