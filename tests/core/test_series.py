"""Series (R24): penalty points added up per bot and series, places by total."""

from __future__ import annotations

import pytest

from referee.core.schedule import series_games
from referee.core.series import SeriesGame, series_results


def game(game_id: str, seats: dict[str, int], winner: str | None,
         forfeit: str | None = None) -> SeriesGame:
    """A finished game: the points left in each bot's hand, by seat order."""
    names = list(seats)
    return SeriesGame(game_id, "deal0", tuple(names), tuple(seats.values()),
                      None if winner is None else names.index(winner),
                      frozenset({names.index(forfeit)} if forfeit else ()))


def test_the_winner_scores_minus_100_and_the_others_their_hand_points() -> None:
    results = series_results([
        game("series1/game1", {"a": 0, "b": 30, "c": 12}, winner="a"),
        game("series1/game2", {"a": 25, "b": 0, "c": 5}, winner="b"),
        game("series2/game1", {"b": 7, "c": 0, "a": 40}, winner="c"),
    ])
    first, second = results
    assert first.games == ("series1/game1", "series1/game2")
    assert [s.to_json() for s in first.standings] == [
        {"bot": "a", "penalty": -100 + 25, "place": 1},
        {"bot": "b", "penalty": 30 - 100, "place": 2},
        {"bot": "c", "penalty": 12 + 5, "place": 3},
    ]
    assert [(s.bot, s.penalty, s.place) for s in second.standings] == [
        ("c", -100, 1), ("b", 7, 2), ("a", 40, 3)]


def test_a_forfeit_scores_its_hand_plus_100_d10() -> None:
    (result,) = series_results([
        game("series1/game1", {"a": 0, "b": 12}, winner="a", forfeit="b"),
    ])
    assert {s.bot: s.penalty for s in result.standings} == {"a": -100, "b": 112}


def test_equal_totals_share_a_place() -> None:
    (result,) = series_results([
        game("series1/game1", {"a": 10, "b": 10, "c": 0}, winner="c"),
    ])
    assert [(s.bot, s.place) for s in result.standings] == [("c", 1), ("a", 2), ("b", 2)]


def test_games_of_no_series_are_refused() -> None:
    with pytest.raises(ValueError, match="game1 is not a game of a series"):
        series_results([game("game1", {"a": 0, "b": 1}, winner="a")])


def test_the_series_schedule() -> None:
    """Seats stay put through a series while the first move passes round; the next
    seating replays the same deals (duplicate series)."""
    games = list(series_games(["a", "b", "c"], 12, 4, seed=9))
    assert [g.game_id for g in games[:5]] == [
        "series1/game1", "series1/game2", "series1/game3", "series1/game4", "series2/game1"]
    first, second, third = games[:4], games[4:8], games[8:12]
    assert {g.seats for g in first} == {("a", "b", "c")}
    assert {g.seats for g in second} == {("b", "c", "a")}
    assert [g.first_seat for g in first] == [0, 1, 2, 0]
    assert [g.seed for g in first] == [g.seed for g in second] == [g.seed for g in third]
    assert len({g.seed for g in first}) == 4
    fourth = list(series_games(["a", "b", "c"], 16, 4, seed=9))[12:]
    assert {g.seats for g in fourth} == {("a", "b", "c")}
    assert not {g.seed for g in fourth} & {g.seed for g in first}  # new deals
    # One seating's games: each seating is played by processes of its own.
    assert [g.game_id for g in series_games(["a", "b", "c"], 12, 4, 9, rotation=1)] == [
        g.game_id for g in second]
