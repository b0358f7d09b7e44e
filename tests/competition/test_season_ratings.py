"""Rating a competition's database from its season's pair counts gives the report of the
full read of its games: the same Elo, games, scores, crosstable and likelihoods of
superiority, on heads-up and multi-player tables alike (docs/ratings.md, "Rating from
pair counts")."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from season_games import store_games

from referee.cli.main import main
from referee.competition import Season, season_pair_counts
from referee.league import ResultStore, rated_games
from referee.ratings import rate, rate_pair_counts


def _season(tmp_path: Path, games: int = 300) -> Path:
    db = tmp_path / "season.sqlite"
    store_games(db, games)  # tables of 2, 3 and 4 bots, ties and forfeits
    with Season(db) as season:
        season.fold()
    return db


@pytest.mark.parametrize("prior", [1.0, 0.0])
def test_pair_counts_rate_as_the_full_read(tmp_path: Path, prior: float) -> None:
    db = _season(tmp_path)
    counts = season_pair_counts(db)
    assert counts is not None
    with ResultStore(db, readonly=True) as store:
        full = rate(rated_games(store), model="bradley-terry", prior=prior, resamples=100)
    fast = rate_pair_counts(counts, prior=prior, resamples=100)
    assert fast.names == full.names
    for mine, theirs in zip(fast.bots, full.bots, strict=True):
        assert mine.elo == pytest.approx(theirs.elo, abs=1e-6)
        assert (mine.games, mine.score) == (theirs.games, pytest.approx(theirs.score))
        # Other resamples (the pairs' counts, not the blocks): intervals of the same size.
        assert mine.ci95 is not None and theirs.ci95 is not None
        assert mine.ci95[0] < mine.elo < mine.ci95[1]
        width, full_width = mine.ci95[1] - mine.ci95[0], theirs.ci95[1] - theirs.ci95[0]
        assert 0.6 < width / full_width < 1.6
    assert {a: dict(row) for a, row in fast.crosstable.items()} == {
        a: dict(row) for a, row in full.crosstable.items()}
    assert {a: dict(row) for a, row in fast.los.items()} == {
        a: dict(row) for a, row in full.los.items()}
    assert fast.resamples == 100


def test_anchor_and_seed(tmp_path: Path) -> None:
    counts = season_pair_counts(_season(tmp_path, 120))
    assert counts is not None
    anchored = rate_pair_counts(counts, anchor="bot3@1", anchor_elo=1000.0, resamples=20)
    assert anchored.bot("bot3@1").elo == pytest.approx(1000.0)
    again = rate_pair_counts(counts, anchor="bot3@1", anchor_elo=1000.0, resamples=20)
    assert anchored == again  # the resamples come from the seed alone
    with pytest.raises(ValueError, match="played no game"):
        rate_pair_counts(counts, anchor="nobody")


def test_counts_only_when_the_aggregates_are_up_to_date(tmp_path: Path) -> None:
    db = tmp_path / "league.sqlite"
    store_games(db, 50)
    assert season_pair_counts(db) is None  # no aggregates: a league's database
    with Season(db) as season:
        season.fold()
    assert season_pair_counts(db) is not None
    store_games(db, 10, seed=2, first=1000)
    assert season_pair_counts(db) is None  # a game not folded yet: the full read


def test_ratings_command_reads_the_counts(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    db = _season(tmp_path, 150)
    assert main(["ratings", str(db), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    counts = season_pair_counts(db)
    assert counts is not None
    expected = rate_pair_counts(counts)
    assert [(r["bot"], r["elo"], r["ci95"]) for r in shown["ratings"]] == [
        (b.name, round(b.elo, 1), [round(x, 1) for x in b.ci95 or ()]) for b in expected.bots]
    with ResultStore(db, readonly=True) as store:
        full = rate(rated_games(store), model="bradley-terry")
    assert [r["elo"] for r in shown["ratings"]] == [round(b.elo, 1) for b in full.bots]


def test_a_read_waits_for_the_fold_of_a_game_just_stored(tmp_path: Path) -> None:
    """The ladder folds right after it stores a game: a read in between waits for the
    fold (up to FOLD_WAIT_S) rather than falling back to reading every game."""
    db = _season(tmp_path, 60)
    store_games(db, 1, seed=5, first=700)  # stored, not folded yet

    def fold() -> None:
        with Season(db) as season:
            season.fold()

    folder = threading.Timer(0.3, fold)
    folder.start()
    try:
        counts = season_pair_counts(db)
    finally:
        folder.join()
    assert counts is not None
    with ResultStore(db, readonly=True) as store:
        assert sum(counts.games) == sum(len(g.seats) for g in store.games())
