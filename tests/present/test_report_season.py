"""The report of a competition's season read from its aggregates shows the figures of the
report read game by game (docs/competition.md, "A season's aggregates"): the same Elo,
scores, crosstable, likelihoods of superiority, rating over the games, forfeits, time
use, counts of games and voided plays, and the same games listed when they are few;
only the intervals differ (the pairs' counts are resampled, not the blocks, as
``taki-referee ratings`` does)."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest
from season_games import store_games

from referee.competition import Season
from referee.core.fairness import Blame, InfraEvent, WaitFigures
from referee.league.store import GameRecord, ResultStore
from referee.present import report_season
from referee.present.report import load_report, read_games, render_report, write_report
from referee.present.report_data import ReportData


def _event(game_id: str, attempt: int) -> InfraEvent:
    figures = WaitFigures(window_ms=50.0, wait_ms=1050.0, cpu_ms=3.0, run_delay_ms=45.0,
                          runnable=True, load_per_cpu=8.5, cpu_pressure=1.0)
    return InfraEvent(game_id, attempt, 0, "bot1@1", Blame.STARVED, "no answer", figures)


def _season(tmp_path: Path, games: int = 300, model: str = "bradley-terry") -> Path:
    """A competition's database: tables of 2 to 4 bots with ties, forfeits and answer
    times, a game voided every time and a game played again after a voided play."""
    db = tmp_path / "season.sqlite"
    store_games(db, games)
    with ResultStore(db) as store:
        store.note("rating_model", model)
        store.note("rules", '{"name": "super-taki-2018"}')
        store.record(GameRecord("v/0", "v", 1, 0, None, (), voided=True,
                                infra=(_event("v/0", 0), _event("v/0", 1))))
        last = next(iter(store.games()))
    with ResultStore(db) as store:
        store.record(attrs.evolve(last, game_id="again/0", block="again",
                                  infra=(_event("again/0", 0),)))
    with Season(db) as season:
        season.fold()
    return db


def _same_figures(fast: ReportData, full: ReportData) -> None:
    assert fast.season is not None and full.season is None
    assert fast.ratings is not None and full.ratings is not None
    assert fast.ratings.names == full.ratings.names
    for mine, theirs in zip(fast.ratings.bots, full.ratings.bots, strict=True):
        assert mine.elo == pytest.approx(theirs.elo, abs=1e-6)
        assert (mine.games, mine.score) == (theirs.games, pytest.approx(theirs.score))
        assert mine.ci95 is not None and theirs.ci95 is not None
        assert mine.ci95[0] < mine.elo < mine.ci95[1]
    assert fast.ratings.resamples == full.ratings.resamples == 200
    assert {a: dict(r) for a, r in fast.ratings.crosstable.items()} == {
        a: dict(r) for a, r in full.ratings.crosstable.items()}
    assert {a: dict(r) for a, r in fast.ratings.los.items()} == {
        a: dict(r) for a, r in full.ratings.los.items()}
    assert fast.history_games == full.history_games
    assert fast.history.keys() == full.history.keys()
    for bot, line in fast.history.items():
        assert [v is None for v in line] == [v is None for v in full.history[bot]]
        assert [v for v in line if v is not None] == pytest.approx(
            [v for v in full.history[bot] if v is not None], abs=1e-6)
    assert fast.forfeits == full.forfeits
    assert {b: t.to_json() for b, t in fast.times.items()} == {
        b: t.to_json() for b, t in full.times.items()}
    assert (fast.stored, fast.void_plays, fast.voided) == (full.stored, full.void_plays,
                                                           full.voided)
    assert (fast.retired, fast.series, fast.rules, fast.time, fast.dates) == (
        full.retired, full.series, full.rules, full.time, full.dates)


def test_the_season_report_has_the_figures_of_the_full_read(tmp_path: Path) -> None:
    db = _season(tmp_path)
    fast, full = load_report(db), read_games(db)
    _same_figures(fast, full)
    assert fast.stored == 301 and fast.void_plays == 3
    assert fast.games == full.games  # few games: every one listed, faults and all
    assert fast.resampled == "the pairs' counts"
    assert full.ratings is not None
    for bot in full.ratings.names:
        played, listed = fast.games_of(bot)
        own_played, own = full.games_of(bot)
        assert played == own_played > report_season.BOT_GAMES
        # The page lists the bot's last games, read by the index of its games.
        assert {g.game_id for g in listed} == {g.game_id for g in own[-report_season.BOT_GAMES:]}


def test_the_season_report_lists_the_last_games(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    db = _season(tmp_path)
    monkeypatch.setattr(report_season, "LISTED_GAMES", 50)
    fast, full = load_report(db), read_games(db)
    _same_figures(fast, full)
    assert fast.games == full.games[-50:]
    page = render_report(fast, tmp_path)
    assert "The last 50 of the 301 games stored" in page
    assert "301 games, 1 voided from" in page
    assert "bootstrap resamples of the pairs' counts" in page
    listed = page.split('id="games"')[1]
    assert "games 1 to 51 of 51" in listed  # the last 50 and the voided game


def test_the_pages_of_both_reads_show_the_same_tables(tmp_path: Path) -> None:
    db = _season(tmp_path)
    fast = render_report(load_report(db), tmp_path)
    full = render_report(read_games(db), tmp_path)

    def tables(page: str) -> list[str]:
        # The crosstable, the forfeits and the time use; the leaderboard without the
        # intervals' column (the only figures that differ).
        found = [re.search(f'<table id="{name}">.*?</table>', page, re.S)
                 for name in ("crosstable", "forfeits", "time-use", "leaderboard")]
        out = [m.group(0) for m in found if m is not None]
        return [re.sub(r'<td class="num">-?\d+ \.\. -?\d+</td>', "", t) for t in out]

    assert tables(fast) == tables(full) and len(tables(fast)) == 4


def test_write_report_of_a_season_writes_a_page_per_bot(tmp_path: Path) -> None:
    db = _season(tmp_path)
    data = write_report(db, tmp_path / "r.html")
    assert data.season is not None and data.ratings is not None
    page = (tmp_path / "r-bots" / "bot0@1.html").read_text()
    played, _ = data.games_of("bot0@1")
    assert f"Games (the last {report_season.BOT_GAMES} of {played})" in page


def test_plackett_luce_and_unfolded_games_are_read_game_by_game(tmp_path: Path) -> None:
    db = _season(tmp_path, 60, model="plackett-luce")
    assert load_report(db).season is None
    other = tmp_path / "behind"
    other.mkdir()
    db = _season(other, 60)
    store_games(db, 5, seed=3, first=900)  # stored after the fold
    assert load_report(db).season is None
