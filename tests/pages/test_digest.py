"""The pages' digest starts from the season's aggregates: it reads the bots' rows, folds
only the games stored since, and holds nothing per game."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from season_games import recompute, store_games

from referee.competition import Season
from referee.server.pages.digest import Digest


def test_a_digest_starts_from_the_aggregates_and_folds_only_the_newer_games(
        tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    store_games(db, 80)
    with Season(db) as season:
        season.fold()  # as the ladder does as its games land
    store_games(db, 20, seed=3, first=500)
    digest = Digest()
    assert digest.catch_up(db) == 20  # the 80 folded before are not read again
    expected = {bot: (games, rated, mu, sigma, points / pairs)
                for bot, games, rated, mu, sigma, points, pairs, *_ in recompute(db)["bots"]}
    assert {bot: (f.games, f.belief.games, f.belief.mu, f.belief.sigma, f.score)
            for bot, f in digest.bots.items()} == expected
    assert digest.stored == 100
    # Memory per bot, none per game: the lists are read from the database.
    assert not any(isinstance(v, list | dict) and len(v) >= 100 for v in vars(digest).values())
    stored = digest.stored_games
    kept, games = stored.bot_games("bot0@1", limit=5)
    assert kept == expected["bot0@1"][0] and len(games) == 5
    assert [g.number for g in games] == sorted((g.number for g in games), reverse=True)
    assert all(g.seat_of("bot0@1") is not None for g in games)
    assert stored.game(100) is not None and stored.game(101) is None


def test_a_database_too_busy_to_fold_leaves_the_digest_as_it_was_until_the_next_read(
        tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    store_games(db, 10)
    digest = Digest()
    assert digest.catch_up(db) == 10
    before = dict(digest.bots)
    store_games(db, 5, seed=4, first=100)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the database (5 s and more)
    try:
        assert digest.catch_up(db) == 0
        assert digest.bots == before and digest.stored == 10
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert digest.catch_up(db) == 5
    assert digest.stored == 15
