"""The rating history: dated snapshots in the database, a bot's chart thinned to a
bound, ranks at a moment, and the full fit made in a process of its own."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from season_games import store_games

from referee.competition import Season
from referee.competition.history import (
    Snapshot,
    fitted_elos,
    history_of,
    latest_fit,
    ranks_at,
    record_snapshot,
)
from referee.competition.ladder_control import LiveRating
from referee.league import rated_games
from referee.league.store import GameRecord, ResultStore, SeatRecord
from referee.ratings import rate
from referee.server.history_link import snapshot_now


def games(db: Path, wins: dict[tuple[str, str], int]) -> None:
    """Heads-up games: ``wins[(a, b)]`` games that ``a`` won against ``b``."""
    with ResultStore(db) as store:
        n = 0
        for (a, b), count in wins.items():
            for _ in range(count):
                seats = (SeatRecord(0, a, 1, 0, None, None), SeatRecord(1, b, 2, 0, None, None))
                store.record(GameRecord(f"{a},{b}/deal{n}/rot0", f"{a},{b}/deal{n}", n, 10,
                                        "win", seats, None))
                n += 1


def test_snapshots_give_a_bounded_dated_history_and_the_ranks_then(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    ResultStore(db).close()
    assert history_of(db, "a") == [] and ranks_at(db, 10.0) == {}
    assert latest_fit(db) == (None, {})
    for step in range(200):
        record_snapshot(db, 1000.0 + step, [
            Snapshot("a", 1500.0 + 2 * step, 1400.0, 1600.0, step, True),
            Snapshot("b", 2000.0 - 2 * step, 1900.0, 2100.0, step, True),
            Snapshot("gone", 3000.0, 2900.0, 3100.0, 5, False)])
    shown = history_of(db, "a", points=20)
    assert len(shown) <= 21
    assert (shown[0].at, shown[-1].at) == (1000.0, 1199.0)  # the first and the last kept
    assert [p.at for p in shown] == sorted(p.at for p in shown)
    assert ranks_at(db, 1100.0) == {"b": 1, "a": 2}  # 1700 to 1800; "gone" is retired
    assert ranks_at(db, 1199.0) == {"a": 1, "b": 2}
    assert ranks_at(db, 5.0) == {"b": 1, "a": 2}  # before the first: the first


@pytest.mark.slow
def test_a_snapshot_holds_the_full_fit_made_in_a_process_of_its_own(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    games(db, {("strong", "weak"): 30, ("weak", "strong"): 10})
    alone = subprocess.run([sys.executable, "-m", "referee.competition.history", str(db)],
                           capture_output=True, text=True, check=True)
    fit = json.loads(alone.stdout)
    assert fit["strong"] > 1500 > fit["weak"]
    assert abs(fit["strong"] + fit["weak"] - 3000) < 1e-6  # the mean Elo is 1500
    live = [LiveRating("strong", 1620.0, 1500.0, 1740.0, 40, True, True),
            LiveRating("weak", 1380.0, 1260.0, 1500.0, 40, True, True)]
    trio.run(snapshot_now, db, live)
    when, fitted = latest_fit(db)
    assert when is not None and fitted == fit
    assert history_of(db, "strong")[0].fitted == fit["strong"]


def test_snapshots_come_every_ten_minutes_and_sooner_while_the_season_is_young() -> None:
    from referee.server.history_link import EVERY_S, EVERY_SEATS, _due

    assert _due(2, 0, 0.0)  # the first ratings
    assert not _due(10, 10, EVERY_S * 2)  # no game since: nothing new to keep
    assert not _due(10 + EVERY_SEATS - 1, 10, 1.0)
    assert _due(10 + EVERY_SEATS, 10, 1.0)
    assert not _due(10_000 + EVERY_SEATS, 10_000, 1.0)  # a tenth of 10000 seats
    assert _due(11_000, 10_000, 1.0)
    assert _due(10_001, 10_000, EVERY_S)


def test_the_full_fit_of_a_season_is_made_from_its_pair_counts(tmp_path: Path) -> None:
    """With the season's aggregates up to date the fit reads the pair counts (no game)
    and gives the Bradley-Terry fit of every game; behind the games it reads them."""
    db = tmp_path / "c.sqlite"
    store_games(db, 200)  # tables of 2 to 4 bots, ties
    with ResultStore(db) as store:
        store.note("rating_model", "bradley-terry")
        full = {b.name: b.elo for b in rate(rated_games(store), resamples=0,
                                            model="bradley-terry").bots}
    assert fitted_elos(db) == pytest.approx(full, abs=1e-6)  # no aggregates: every game
    with Season(db) as season:
        season.fold()
    changed = sqlite3.connect(db)
    with changed:  # the seats are no longer read: changing them changes nothing
        changed.execute("UPDATE seats SET place = 1")
    changed.close()
    assert fitted_elos(db) == pytest.approx(full, abs=1e-6)
