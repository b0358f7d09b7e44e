"""Sessions kept in the competition's database: they survive a restart of the server,
the database holds only a hash of each session's key, and a session ends when it
expires, at sign-out, and when its participant's token changes (in this server or by
another process)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import trio
from pages_helpers import Browsers, csrf_of, sign_in
from served import Served

from referee.server.pages import sessions


def rows(db: Path) -> list[tuple[str, str, str, str, float]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT key_sha256, role, name, token_sha256, expires FROM page_sessions"
            " ORDER BY role, name").fetchall()


def restarted(served: Served, web: httpx.AsyncClient) -> httpx.AsyncClient:
    """A browser with ``web``'s cookies, of a new application (no memory of the old)."""
    again = Browsers(served).new()
    again.cookies = web.cookies
    return again


async def test_sessions_survive_a_restart_and_the_database_keeps_only_hashes(
        served: Served, browsers: Browsers) -> None:
    alice, boss = browsers.new(), browsers.new()
    await sign_in(alice, served.tokens["alice"])
    await sign_in(boss, served.organizer)
    db = served.state.store.path
    kept = rows(db)
    assert [(r[1], r[2]) for r in kept] == [("organizer", ""), ("participant", "alice")]
    keys = [alice.cookies["taki_session"], boss.cookies["taki_session"]]
    assert {r[0] for r in kept} == {hashlib.sha256(k.encode()).hexdigest() for k in keys}
    raw = db.read_bytes() + (db.with_name(db.name + "-wal").read_bytes()
                             if db.with_name(db.name + "-wal").exists() else b"")
    assert not any(k.encode() in raw for k in keys)
    page = await restarted(served, alice).get("/me")
    assert page.status_code == 200 and "alice's bots" in page.text
    assert csrf_of(page.text) == csrf_of((await alice.get("/me")).text)
    assert (await restarted(served, boss).get("/organizer")).status_code == 200


async def test_signing_out_deletes_the_session(served: Served, browsers: Browsers) -> None:
    alice = browsers.new()
    await sign_in(alice, served.tokens["alice"])
    copy = restarted(served, alice)
    page = await alice.get("/me")
    out = await alice.post("/signout", data={"csrf": csrf_of(page.text)})
    assert out.status_code == 303 and rows(served.state.store.path) == []
    assert (await copy.get("/me")).status_code == 401


async def test_an_expired_session_signs_nobody_in(served: Served, browsers: Browsers,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    alice = browsers.new()
    await sign_in(alice, served.tokens["alice"])
    assert (await alice.get("/me")).status_code == 200
    now = sessions.time.time()
    monkeypatch.setattr(sessions.time, "time", lambda: now + sessions.IDLE_S + 1)
    assert (await alice.get("/me")).status_code == 401
    bob = browsers.new()
    await sign_in(bob, served.tokens["bob"])  # a new session clears the expired ones
    assert [r[2] for r in rows(served.state.store.path)] == ["bob"]


async def test_a_used_session_lasts_and_is_written_at_most_every_few_minutes(
        served: Served, browsers: Browsers, monkeypatch: pytest.MonkeyPatch) -> None:
    alice = browsers.new()
    await sign_in(alice, served.tokens["alice"])
    start = sessions.time.time()
    first = rows(served.state.store.path)[0][4]
    for step in (60.0, sessions.TOUCH_S + 61, sessions.IDLE_S + 120):
        monkeypatch.setattr(sessions.time, "time", lambda step=step: start + step)
        assert (await alice.get("/me")).status_code == 200
        if step == 60.0:
            assert rows(served.state.store.path)[0][4] == first
    assert rows(served.state.store.path)[0][4] > first + sessions.IDLE_S


async def test_a_token_changed_by_another_process_ends_that_participants_sessions(
        served: Served, browsers: Browsers) -> None:
    alice, bob = browsers.new(), browsers.new()
    await sign_in(alice, served.tokens["alice"])
    await sign_in(bob, served.tokens["bob"])
    new = await trio.to_thread.run_sync(served.state.store.rotate_token, "alice")
    assert (await alice.get("/me")).status_code == 401
    assert (await bob.get("/me")).status_code == 200
    await sign_in(alice, new)
    assert (await alice.get("/me")).status_code == 200


async def test_rotating_from_the_page_keeps_only_the_session_that_rotated(
        served: Served, browsers: Browsers) -> None:
    web, other = browsers.new(), browsers.new()
    await sign_in(web, served.tokens["alice"])
    await sign_in(other, served.tokens["alice"])
    page = await web.get("/me")
    assert (await web.post("/me/token", data={"csrf": csrf_of(page.text)})).status_code == 200
    assert len(rows(served.state.store.path)) == 1
    assert (await restarted(served, web).get("/me")).status_code == 200
    assert (await other.get("/me")).status_code == 401


async def test_the_sessions_database_is_never_used_on_the_trio_thread(
        served: Served, browsers: Browsers, monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[bool] = []
    table = served.state.store.sessions

    def watch(method: Callable[..., object]) -> Callable[..., object]:
        def watched(*args: object) -> object:
            try:
                trio.lowlevel.current_task()
                used.append(True)
            except RuntimeError:  # not in the Trio thread
                used.append(False)
            return method(*args)
        return watched

    for name in ("start", "live", "end", "rebind"):
        monkeypatch.setattr(table, name, watch(getattr(table, name)))
    alice = browsers.new()
    await sign_in(alice, served.tokens["alice"])
    page = await alice.get("/me")
    await alice.post("/signout", data={"csrf": csrf_of(page.text)})
    assert len(used) >= 3 and not any(used)
