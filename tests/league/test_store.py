"""The results database: each game stored exactly once, in one transaction."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from referee.core.fairness import Blame, InfraEvent, WaitFigures
from referee.core.time_use import TimeUse
from referee.league import store as store_module
from referee.league.store import (
    APPLICATION_ID,
    FIRST_LAYOUT,
    SCHEMA_VERSION,
    TABLES,
    GameRecord,
    ResultStore,
    SeatRecord,
    StoreError,
)


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


def test_games_since_reads_each_new_game_once_in_stored_order(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    timed = attrs.evolve(game("g2", {"b": 1, "c": 2}), seats=tuple(
        attrs.evolve(s, time=TimeUse((1.5, 30.0), 1)) for s in game("g2", {"b": 1, "c": 2}).seats))
    with ResultStore(db) as store:
        assert store.games_since(0, 10) == (0, [])
        store.record(game("g9", {"a": 1, "b": 2}, forfeits={"b": "crash"}))
        store.record(timed)
        store.record(game("g1", {"a": 2, "c": 1}))
        last, first_two = store.games_since(0, 2)
        assert first_two == [game("g9", {"a": 1, "b": 2}, forfeits={"b": "crash"}), timed]
        after, rest = store.games_since(last, 2)
        assert [g.game_id for g in rest] == ["g1"]
        assert store.games_since(after, 2) == (after, [])
        store.record(game("g0", {"a": 1, "c": 2}))
        assert [g.game_id for g in store.games_since(after, 2)[1]] == ["g0"]
        assert [g for _, chunk in [store.games_since(0, 100)] for g in chunk] == list(
            store.games())


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


def test_bind_drops_what_only_the_database_holds(tmp_path: Path) -> None:
    """An earlier version bound the bots and the deals too; a league that grew agrees
    with it on the rest, and the database then holds the new description."""
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.bind("league", "bots=a,b;table_size=2;deals=6;seed=5")
        store.bind("league", "table_size=2;seed=5")
        assert query(db, "SELECT value FROM meta WHERE key = 'league'") == [
            ("table_size=2;seed=5",)]
        with pytest.raises(StoreError) as info:
            store.bind("league", "table_size=3;seed=5")
        assert "(table_size: 2 in the database, 3 now)" in str(info.value)


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


# ------------------------------------------------------- whose database it is


def snapshot(path: Path) -> tuple[bytes, list[str]]:
    """The file's bytes and the names of the files beside it (a -wal, a -shm)."""
    return path.read_bytes(), sorted(p.name for p in path.parent.iterdir())


def sqlite_file(path: Path, *statements: str) -> Path:
    with contextlib.closing(sqlite3.connect(path)) as con:
        for statement in statements:
            con.execute(statement)
        con.commit()
    return path


@pytest.mark.parametrize("statements, tables", [
    # Another program's tables of the same names, with other columns.
    (("CREATE TABLE games (id INTEGER, x TEXT)", "CREATE TABLE meta (k, v)",
      "INSERT INTO games VALUES (1, 'a')"), "games, meta"),
    # Nothing in common with a results database.
    (("CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('keep me')"), "notes"),
    # A results database with a table of someone else's in it.
    ((*(f"CREATE TABLE {name} ({', '.join(columns)})"
        for name, columns in TABLES.items()), "CREATE TABLE extra (x)"),
     "bots, extra, games, meta, seats"),
])
@pytest.mark.parametrize("readonly", [False, True])
def test_another_programs_database_is_refused_and_left_unchanged(
    tmp_path: Path, statements: tuple[str, ...], tables: str, readonly: bool
) -> None:
    db = sqlite_file(tmp_path / "other.db", *statements)
    before = snapshot(db)
    with pytest.raises(StoreError) as info:
        ResultStore(db, readonly=readonly)
    assert str(info.value) == (
        f"{db} is not a taki-referee results database (its tables: {tables});"
        " it was left unchanged: give another file"
    )
    assert snapshot(db) == before
    assert query(db, "PRAGMA journal_mode") == [("delete",)]


def test_another_programs_marked_database_is_refused(tmp_path: Path) -> None:
    db = sqlite_file(tmp_path / "other.db", "PRAGMA application_id = 7")
    with pytest.raises(StoreError, match="not a taki-referee results database"):
        ResultStore(db)
    assert query(db, "PRAGMA application_id") == [(7,)]


def test_a_new_database_is_marked(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    ResultStore(db).close()
    assert query(db, "PRAGMA application_id") == [(APPLICATION_ID,)]
    assert query(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    # An empty file (as ``touch`` leaves) becomes a results database too.
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with ResultStore(empty) as store:
        assert store.record(game("g1", {"a": 1, "b": 2}))
    assert query(empty, "PRAGMA application_id") == [(APPLICATION_ID,)]


def test_a_database_of_an_earlier_version_opens_and_is_marked_when_written(
    tmp_path: Path,
) -> None:
    """Earlier versions set no mark: their databases are known by their tables."""
    db = tmp_path / "old.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.executescript(FIRST_LAYOUT)
        con.execute("INSERT INTO meta VALUES ('league', 'bots=a,b')")
        con.execute("INSERT INTO games(game_id, block, seed, actions, reason) "
                    "VALUES ('g1', 'b', 1, 9, 'win')")
        con.commit()
    with ResultStore(db, readonly=True) as store:
        assert store.game_count() == 1
    assert query(db, "PRAGMA application_id") == [(0,)]  # reading marks nothing
    with ResultStore(db) as store:
        store.bind("league", "bots=a,b")
        assert store.finished_ids() == {"g1"}
    assert query(db, "PRAGMA application_id") == [(APPLICATION_ID,)]


def test_a_database_of_a_newer_layout_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    ResultStore(db).close()
    sqlite_file(db, f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    for readonly in (False, True):
        with pytest.raises(StoreError, match="written by a newer version of taki-referee"):
            ResultStore(db, readonly=readonly)


def test_reading_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.record(game("g1", {"a": 1, "b": 2}))
    before = snapshot(db)
    with ResultStore(db, readonly=True) as store:
        assert [g.game_id for g in store.games()] == ["g1"]
        assert store.forfeit_counts() == {}
        with pytest.raises(StoreError, match=r"cannot write to results database .*read-only"):
            store.record(game("g2", {"a": 1, "b": 2}))
    assert snapshot(db)[0] == before[0]
    with pytest.raises(StoreError, match="it is empty"):
        ResultStore(sqlite_file(tmp_path / "empty.sqlite"), readonly=True)


@contextlib.contextmanager
def read_only_file(path: Path) -> Iterator[None]:
    """``path`` read-only, even for root (who ignores permissions): made immutable."""
    path.chmod(0o444)
    immutable = False
    if os.access(path, os.W_OK):
        immutable = subprocess.run(["chattr", "+i", str(path)], capture_output=True,
                                   check=False).returncode == 0
        if not immutable:
            path.chmod(0o644)
            pytest.skip("this user can write to any file, and chattr +i is not available")
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(0o644)


def test_a_read_only_file_is_reported_before_anything_is_played(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.record(game("g1", {"a": 1, "b": 2}))
    with read_only_file(db):
        with pytest.raises(StoreError) as info:
            ResultStore(db)
        assert str(info.value) == (
            f"cannot open results database {db}: the file is read-only (check the"
            " permissions of the file and of its folder)"
        )
        with ResultStore(db, readonly=True) as store:  # reading it is fine
            assert store.game_count() == 1


def test_a_lock_held_by_another_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_MS", 50)
    db = tmp_path / "r.sqlite"
    store = ResultStore(db)
    other = sqlite3.connect(db, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        retry = "another program is using it .*; retry when that program has finished"
        with pytest.raises(StoreError, match=f"^cannot write to results database {db}: {retry}"):
            store.record(game("g1", {"a": 1, "b": 2}))
        with pytest.raises(StoreError, match=f"^cannot open results database {db}: {retry}"):
            ResultStore(db)
        other.execute("ROLLBACK")
        assert store.record(game("g1", {"a": 1, "b": 2}))  # nothing was lost
        # Before WAL mode is set, a new database is locked in another way.
        fresh = tmp_path / "fresh.sqlite"
        fresh.write_bytes(b"")
        with contextlib.closing(sqlite3.connect(fresh, isolation_level=None)) as holder:
            holder.execute("BEGIN EXCLUSIVE")
            with pytest.raises(StoreError, match=retry):
                ResultStore(fresh)
    finally:
        other.close()
        store.close()


# ------------------------------------------------------ one writer, a full disk


def test_a_database_has_one_league_writer_at_a_time(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as first:
        first.claim()
        first.claim()  # again by its holder: nothing changes
        with ResultStore(db) as second, pytest.raises(StoreError) as caught:
            second.claim()
        assert str(db) in str(caught.value) and "in use by another league run" in str(
            caught.value
        )
        # Reading (ratings, report) is never refused.
        with ResultStore(db, readonly=True) as reader:
            assert reader.game_count() == 0
    with ResultStore(db) as third:
        third.claim()  # released when its holder closed


def test_a_full_database_says_so_and_keeps_what_it_held(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.record(game("g0", {"a": 1, "b": 2}))
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count={pages}")  # as if the disk were full
        with pytest.raises(StoreError) as caught:
            for i in range(1, 200):
                store.record(game(f"g{i}", {"a": 1, "b": 2}, block="x" * 2000))
        message = str(caught.value)
        # SQLite's own words, not those of a failed second rollback.
        assert "database or disk is full" in message and "rollback" not in message
        assert "\n" not in message
        stored = store.game_count()
    with ResultStore(db) as store:
        assert store.game_count() == stored >= 1
        assert store._db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        # Every stored game has all of its seats: no game was stored in part.
        assert {len(g.seats) for g in store.games()} == {2}


def test_answer_times_are_stored_per_seat_and_summed_per_bot(tmp_path: Path) -> None:
    record = game("g1", {"a": 1, "b": 2})
    timed = attrs.evolve(record, seats=(
        attrs.evolve(record.seats[0], time=TimeUse((10.0, 20.5), 0)),
        attrs.evolve(record.seats[1], time=TimeUse((480.0,), 1)),
    ))
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.record(timed)
        store.record(attrs.evolve(game("g2", {"a": 2, "b": 1}), seats=(
            attrs.evolve(record.seats[0], time=TimeUse((30.0,), 1)),
            attrs.evolve(record.seats[1], time=TimeUse()),
        )))
    with ResultStore(tmp_path / "r.sqlite", readonly=True) as store:
        first = next(store.games())
        assert [s.time for s in first.seats] == [TimeUse((10.0, 20.5), 0), TimeUse((480.0,), 1)]
        use = store.time_use()
    assert use["a"] == TimeUse((10.0, 20.5, 30.0), 1)
    assert use["b"].decisions == 1 and use["b"].max == 480.0 and use["b"].near_misses == 1


def test_a_first_layout_database_gains_the_times_table_when_a_league_opens_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "v1.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.executescript(FIRST_LAYOUT)
        con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        con.execute("PRAGMA user_version = 1")
        con.execute("INSERT INTO games(game_id, block, seed, actions, reason) "
                    "VALUES ('g1', 'b', 1, 9, 'win')")
        con.execute("INSERT INTO seats VALUES ('g1', 0, 'a', 1, 0, NULL, NULL)")
        con.commit()
    with ResultStore(db, readonly=True) as store:  # read as it is: no times yet
        assert store.time_use() == {}
        assert next(store.games()).seats[0].time == TimeUse()
    with ResultStore(db) as store:
        store.record(attrs.evolve(game("g2", {"a": 1, "b": 2}), seats=(
            SeatRecord(0, "a", 1, 0, time=TimeUse((5.0,), 0)),
            SeatRecord(1, "b", 2, 10),
        )))
        assert store.time_use()["a"] == TimeUse((5.0,), 0)
    assert query(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]


def infra_event(game_id: str, attempt: int) -> InfraEvent:
    figures = WaitFigures(window_ms=400.0, wait_ms=500.0, cpu_ms=30.0, run_delay_ms=350.0,
                          runnable=True, load_per_cpu=8.5, cpu_pressure=1.0)
    return InfraEvent(game_id, attempt, 0, "a", Blame.STARVED, "no answer within 100 ms",
                      figures)


def test_voided_plays_and_games_are_stored_and_never_played_again(tmp_path: Path) -> None:
    """A game voided once and then played keeps its result and its event; a game voided
    every time has no result (no seats, no rating), counts as stored, and keeps its
    events with their figures."""
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        replayed = attrs.evolve(game("g1", {"a": 1, "b": 2}), infra=(infra_event("g1", 0),))
        assert store.record(replayed)
        voided = GameRecord("g2", "b", 42, 0, None, (), infra=(infra_event("g2", 0),
                                                               infra_event("g2", 1)),
                            voided=True)
        assert store.record(voided)
        assert not store.record(voided)
        assert not store.record(game("g2", {"a": 1, "b": 2}))  # never played again
        assert store.finished_ids() == {"g1", "g2"}
        assert store.has_game("g2")
        assert store.game_count() == 1
        assert [g.game_id for g in store.games()] == ["g1"]
        assert store.voided_count() == 1
        events = store.infra_events()
        assert events == [infra_event("g1", 0), infra_event("g2", 0), infra_event("g2", 1)]
    assert query(db, "SELECT COUNT(*) FROM seats WHERE game_id = 'g2'") == [(0,)]


def test_a_ladder_keeps_its_meetings(tmp_path: Path) -> None:
    from referee.league.store import Meeting

    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add_meeting(Meeting("a,b/deals0-1", ("a", "b"), 0, 2))
        store.add_meeting(Meeting("a,b,c/deals0-0", ("a", "b", "c"), 0, 1))
        store.finish_meeting("a,b/deals0-1")
        with pytest.raises(sqlite3.IntegrityError):  # a meeting is chosen once
            store.add_meeting(Meeting("a,b/deals0-1", ("a", "b"), 0, 2))
    with ResultStore(db, readonly=True) as store:
        assert store.meetings() == [Meeting("a,b/deals0-1", ("a", "b"), 0, 2, finished=True),
                                    Meeting("a,b,c/deals0-0", ("a", "b", "c"), 0, 1)]


def test_a_second_layout_database_is_read_as_it_is_and_gains_meetings_when_written(
    tmp_path: Path,
) -> None:
    db = tmp_path / "v2.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.executescript(FIRST_LAYOUT)
        con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        con.execute("PRAGMA user_version = 2")
        con.commit()
    with ResultStore(db, readonly=True) as store:
        assert store.meetings() == []
        assert store.voided_count() == 0  # nor voided games
        assert store.infra_events() == []
        assert store.finished_ids() == set()
    assert query(db, "PRAGMA user_version") == [(2,)]
    with ResultStore(db) as store:
        assert store.meetings() == []
        assert store.record(GameRecord("g", "b", 1, 0, None, (), voided=True))
        assert store.voided_count() == 1
    assert query(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)] == [(4,)]
