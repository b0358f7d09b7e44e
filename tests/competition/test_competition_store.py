"""Participants and submissions in the competition's database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from referee.competition.errors import CompetitionError, Refusal, Refused
from referee.competition.records import Status, Step
from referee.competition.store import MAX_ATTEMPTS, CompetitionStore
from referee.competition.tokens import digest
from referee.league.store import ResultStore


@pytest.fixture
def store(tmp_path: Path) -> CompetitionStore:
    return CompetitionStore(tmp_path / "c.sqlite")


def add(store: CompetitionStore, who: str, bot: str, folder: str, *, per_day: int = 20,
        max_pending: int = 5) -> int:
    return store.add_submission(who, bot, "python bot.py", None, folder, per_day=per_day,
                                max_pending=max_pending).id


def test_a_token_is_stored_only_as_its_hash(store: CompetitionStore, tmp_path: Path) -> None:
    token = store.add_participant("alice")
    assert len(token) == 64
    assert store.authenticate(token).name == "alice"
    raw = (tmp_path / "c.sqlite").read_bytes()
    assert token.encode() not in raw
    rows = sqlite3.connect(tmp_path / "c.sqlite").execute(
        "SELECT token_sha256 FROM participants").fetchall()
    assert rows == [(digest(token),)]


@pytest.mark.parametrize("token", ["", "0" * 64, "not hex" * 9, "A" * 64])
def test_a_wrong_token_is_refused(store: CompetitionStore, token: str) -> None:
    store.add_participant("alice")
    with pytest.raises(Refused) as caught:
        store.authenticate(token)
    assert caught.value.refusal is Refusal.UNAUTHENTICATED


def test_names_are_checked_and_unique(store: CompetitionStore) -> None:
    store.add_participant("alice")
    with pytest.raises(CompetitionError, match="exists already"):
        store.add_participant("alice")
    with pytest.raises(CompetitionError, match="not a usable name"):
        store.add_participant("bob@2")


def test_the_database_is_the_league_store_too(store: CompetitionStore, tmp_path: Path) -> None:
    with ResultStore(tmp_path / "c.sqlite", readonly=True) as results:
        assert results.game_count() == 0


def test_a_bot_name_belongs_to_the_first_participant(store: CompetitionStore) -> None:
    store.add_participant("alice")
    store.add_participant("bob")
    add(store, "alice", "greedy", "f1")
    with pytest.raises(Refused) as caught:
        add(store, "bob", "greedy", "f2")
    assert caught.value.refusal is Refusal.FORBIDDEN
    assert [s.participant for s in store.submissions()] == ["alice"]


def test_daily_and_pending_limits(store: CompetitionStore) -> None:
    store.add_participant("alice")
    add(store, "alice", "a", "f1", max_pending=2)
    add(store, "alice", "a", "f2", max_pending=2)
    with pytest.raises(Refused, match="2 submissions waiting") as caught:
        add(store, "alice", "a", "f3", max_pending=2)
    assert caught.value.refusal is Refusal.TOO_MANY
    with pytest.raises(Refused, match="2 submissions in 24 hours"):
        add(store, "alice", "a", "f4", per_day=2)


def test_passing_versions_number_up_and_the_oldest_retire(store: CompetitionStore) -> None:
    store.add_participant("alice")
    first = add(store, "alice", "greedy", "f1")
    rejected = add(store, "alice", "greedy", "f2")
    second = add(store, "alice", "greedy", "f3")
    assert store.activate(first, "ok", active_bots=1).entrant == "greedy@1"
    store.reject(rejected, Step.CHECK, "FAIL handshake")
    assert store.activate(second, "ok", active_bots=1).entrant == "greedy@2"
    assert store.submission(first).status is Status.RETIRED
    assert [s.entrant for s in store.active()] == ["greedy@2"]
    assert store.submission(rejected).step is Step.CHECK


def test_an_interrupted_build_goes_back_to_the_queue_then_is_rejected(
        store: CompetitionStore) -> None:
    store.add_participant("alice")
    sub = add(store, "alice", "a", "f1")
    for _ in range(MAX_ATTEMPTS - 1):
        assert store.start(sub, Status.BUILDING)
        assert [s.id for s in store.resume()] == [sub]  # a kill -9, then a start
        assert store.submission(sub).status is Status.QUEUED
    assert store.start(sub, Status.BUILDING)
    assert store.resume() == []
    assert store.submission(sub).step is Step.INTERRUPTED


def test_disabling_retires_the_bots_and_stops_the_token(store: CompetitionStore) -> None:
    token = store.add_participant("alice")
    active = add(store, "alice", "a", "f1")
    pending = add(store, "alice", "a", "f2")
    store.activate(active, "ok", active_bots=1)
    assert store.disable_participant("alice") == ["a@1"]
    assert store.active() == []
    assert store.submission(pending).status is Status.REJECTED
    assert not store.start(pending, Status.CHECKING)
    with pytest.raises(Refused) as caught:
        store.authenticate(token)
    assert caught.value.refusal is Refusal.FORBIDDEN


def test_enabling_brings_back_the_token_and_the_bots_the_disabling_retired(
        store: CompetitionStore) -> None:
    token = store.add_participant("alice")
    first, second = add(store, "alice", "a", "f1"), add(store, "alice", "a", "f2")
    store.activate(first, "ok", active_bots=1)
    store.activate(second, "ok", active_bots=1)  # a@1 retires: a newer version came
    with pytest.raises(CompetitionError, match="not disabled"):
        store.enable_participant("alice")
    assert store.disable_participant("alice") == ["a@2"]
    assert store.enable_participant("alice") == ["a@2"]  # not a@1
    assert [s.entrant for s in store.active()] == ["a@2"]
    assert store.authenticate(token).name == "alice"
    # A second disabling and enabling brings back what is active then, once.
    assert store.disable_participant("alice") == ["a@2"]
    assert store.enable_participant("alice") == ["a@2"]
    with pytest.raises(CompetitionError, match="no participant named 'bob'"):
        store.enable_participant("bob")


def test_frozen_submissions_are_refused(store: CompetitionStore) -> None:
    store.add_participant("alice")
    store.freeze()
    with pytest.raises(Refused) as caught:
        add(store, "alice", "a", "f1")
    assert caught.value.refusal is Refusal.FROZEN


def test_a_database_made_before_idempotency_keys_gets_them(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    ResultStore(db).close()
    with sqlite3.connect(db) as old:  # the submissions table as it was made before
        old.execute(
            "CREATE TABLE submissions (id INTEGER PRIMARY KEY AUTOINCREMENT,"
            " participant TEXT NOT NULL, bot TEXT NOT NULL, command TEXT NOT NULL,"
            " build TEXT, status TEXT NOT NULL, version INTEGER, step TEXT,"
            " output TEXT NOT NULL DEFAULT '', folder TEXT NOT NULL UNIQUE,"
            " attempts INTEGER NOT NULL DEFAULT 0, received_at TEXT NOT NULL,"
            " UNIQUE (bot, version))")
    with CompetitionStore(db) as store:
        store.add_participant("alice")
        first = store.add_submission("alice", "rnd", "python bot.py", None, "f1",
                                     per_day=1, max_pending=5, key="k" * 32)
        again = store.add_submission("alice", "rnd", "python bot.py", None, "f2",
                                     per_day=1, max_pending=5, key="k" * 32)
        assert again == first  # the same upload: not counted against per_day
        assert store.keyed_submission("alice", "k" * 32) == first
        assert store.keyed_submission("bob", "k" * 32) is None
        with pytest.raises(Refused) as refused:
            store.add_submission("alice", "rnd", "python bot.py", None, "f3",
                                 per_day=1, max_pending=5, key="m" * 32)
        assert refused.value.refusal is Refusal.TOO_MANY
    with CompetitionStore(db) as store:  # opened again: nothing to change
        assert [s.id for s in store.submissions()] == [first.id]


def test_a_session_lives_while_its_token_does_and_until_it_expires(
        store: CompetitionStore) -> None:
    """The pages' sessions (``CompetitionStore.sessions``): live while unexpired and
    opened with the token its participant (or the organizer) still has; pushed back
    when used; ended one by one, or all but one when the participant's token changes."""
    from referee.competition.sessions import IDLE_S, TOUCH_S, Role

    token = store.add_participant("alice")
    sessions = store.sessions
    sessions.start("k1", Role.PARTICIPANT, "alice", digest(token), now=1000.0)
    sessions.start("k2", Role.PARTICIPANT, "alice", digest(token), now=1000.0)
    sessions.start("org", Role.ORGANIZER, "", "organizer-digest", now=1000.0)
    assert sessions.live("k1", 1001.0, "organizer-digest") == (Role.PARTICIPANT, "alice")
    assert sessions.live("org", 1001.0, "organizer-digest") == (Role.ORGANIZER, "")
    assert sessions.live("org", 1001.0, "another organizer token") is None
    assert sessions.live("nobody", 1001.0, "organizer-digest") is None
    later = 1000.0 + TOUCH_S + 1  # used: its expiry is pushed back
    assert sessions.live("k1", later, "organizer-digest") is not None
    assert sessions.live("k1", 1000.0 + IDLE_S + 1, "organizer-digest") is not None
    assert sessions.live("k2", 1000.0 + IDLE_S + 1, "organizer-digest") is None  # expired
    new = store.rotate_token("alice")
    assert sessions.live("k1", later, "organizer-digest") is None  # the old token
    sessions.rebind("k1", "alice", digest(new))
    assert sessions.live("k1", later, "organizer-digest") == (Role.PARTICIPANT, "alice")
    sessions.end("k1")
    assert sessions.live("k1", later, "organizer-digest") is None
