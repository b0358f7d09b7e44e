"""The results database: each game stored exactly once, in one transaction."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from referee.store import GameRecord, ResultStore, SeatRecord, StoreError


def game(
    game_id: str,
    places: dict[str, int],
    *,
    block: str = "b",
    forfeits: dict[str, str] | None = None,
    replay: str | None = None,
) -> GameRecord:
    forfeits = forfeits or {}
    return GameRecord(
        game_id=game_id,
        block=block,
        seed=42,
        actions=17,
        reason="win",
        seats=tuple(
            SeatRecord(
                seat=i,
                bot=bot,
                place=place,
                points=10 * (place - 1),
                forfeit_reason=forfeits.get(bot),
                forfeit_detail=None if bot not in forfeits else f"{bot} did {forfeits[bot]}",
            )
            for i, (bot, place) in enumerate(places.items())
        ),
        replay=replay,
    )


def query(path: Path, sql: str) -> list[tuple[object, ...]]:
    """Rows from another, read-only connection to the database."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        return con.execute(sql).fetchall()


def test_record_exactly_once(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        first = game("g1", {"a": 1, "b": 2}, replay="replays/g1.json")
        assert store.record(first)
        # The same game again (a resumed run that replayed it) is not counted twice,
        # even with a different result.
        assert not store.record(first)
        assert not store.record(game("g1", {"a": 2, "b": 1}))
        assert store.game_count() == 1
        assert list(store.games()) == [first]
    assert query(db, "SELECT COUNT(*) FROM seats") == [(2,)]


def test_each_game_is_committed_when_recorded(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    store = ResultStore(db)
    try:
        assert query(db, "PRAGMA journal_mode") == [("wal",)]
        store.record(game("g1", {"a": 1, "b": 2}))
        # Visible to another connection at once, while the store is still open.
        assert query(db, "SELECT game_id FROM games") == [("g1",)]
    finally:
        store.close()


def test_a_failed_record_leaves_nothing(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.sqlite") as store:
        broken = GameRecord("g1", "b", 1, 3, "win", (
            SeatRecord(0, "a", 1, 0), SeatRecord(0, "b", 2, 5),  # the same seat twice
        ))
        with pytest.raises(sqlite3.IntegrityError):
            store.record(broken)
        assert store.game_count() == 0
        assert not store.has_game("g1")
        # The game is still playable and recordable afterwards.
        assert store.record(game("g1", {"a": 1, "b": 2}))
        assert store.game_count() == 1


def test_resume_sets(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        assert store.finished_ids() == set()
        store.record(game("g1", {"a": 1, "b": 2}))
        store.record(game("g2", {"b": 1, "a": 2}))
    with ResultStore(db) as store:  # a second run
        assert store.finished_ids() == {"g1", "g2"}
        assert store.has_game("g2") and not store.has_game("g3")
        assert [g.game_id for g in store.games()] == ["g1", "g2"]


def test_forfeit_counts(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.sqlite") as store:
        assert store.forfeit_counts() == {}
        store.record(game("g1", {"a": 1, "b": 2}, forfeits={"b": "timeout"}))
        store.record(game("g2", {"a": 1, "b": 2}, forfeits={"b": "timeout"}))
        store.record(game("g3", {"a": 2, "b": 1}, forfeits={"a": "crash"}))
        store.record(game("g4", {"a": 1, "b": 2, "c": 3}, forfeits={"b": "illegal", "c": "crash"}))
        store.record(game("g4", {"a": 1, "b": 2}, forfeits={"b": "illegal"}))  # ignored
        assert store.forfeit_counts() == {
            "a": {"crash": 1},
            "b": {"timeout": 2, "illegal": 1},
            "c": {"crash": 1},
        }
        seat = next(s for s in next(iter(store.games())).seats if s.bot == "b")
        assert seat.forfeit_reason == "timeout" and seat.forfeit_detail == "b did timeout"


def test_bind_refuses_a_different_league(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    identity = "bots=a,b;table_size=2;deals=6;seed=5"
    with ResultStore(db) as store:
        store.bind("league", identity)
        store.bind("league", identity)  # the same league: fine
    with ResultStore(db) as store:
        store.bind("league", identity)
        with pytest.raises(StoreError) as info:
            store.bind("league", identity.replace("seed=5", "seed=6"))
        message = str(info.value)
        assert str(db) in message
        assert "seed: 5 in the database, 6 now" in message
        assert "deals" not in message  # only what differs
        with pytest.raises(StoreError, match="different league"):
            store.bind("league", "something else entirely")
        store.bind("league", identity)  # the refusals changed nothing


def test_register_bots(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.register_bots([("a", "./a"), ("b", "./b")])
        store.register_bots([("a", "./a --v2")])
    rows = query(db, "SELECT name, command FROM bots ORDER BY name")
    assert rows == [("a", "./a --v2"), ("b", "./b")]


def test_unusable_database(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot open results database"):
        ResultStore(junk)
    with pytest.raises(StoreError, match="cannot open results database"):
        ResultStore(tmp_path / "no" / "such" / "dir" / "r.sqlite")
