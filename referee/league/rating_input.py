"""What the ratings rate in a results database: each stored game, or in a league of
series each series, as one ranking of its bots (``referee.ratings``)."""

from __future__ import annotations

from referee.core import SeriesGame, SeriesResult, series_of, series_results
from referee.league.store import GameRecord, ResultStore
from referee.ratings import RatedGame
from referee.rules import EndReason


def series_game(game: GameRecord) -> SeriesGame:
    """What a series needs of a stored game (``referee.core.series``). The winner is the
    seat in first place of a game that was won: one that stopped at the action limit
    has none."""
    seats = sorted(game.seats, key=lambda s: s.seat)
    winner = None
    if game.reason in (EndReason.WIN, EndReason.LAST_STANDING):
        winner = next(s.seat for s in seats if s.place == 1)
    return SeriesGame(game.game_id, game.block, tuple(s.bot for s in seats),
                      tuple(s.points for s in seats), winner,
                      frozenset(s.seat for s in seats if s.forfeit_reason is not None))


def stored_series(store: ResultStore) -> list[SeriesResult]:
    """The series of a league of series, in schedule-id order (none for single games)."""
    games = sorted((g for g in store.games() if series_of(g.game_id) is not None),
                   key=lambda g: g.game_id)
    return series_results(series_game(g) for g in games)


def rated_games(store: ResultStore) -> list[RatedGame]:
    """The stored games as rating input, in schedule-id order: the bootstrap draws blocks
    by position, so the order in which concurrent games happened to finish must not
    change the intervals. In a league of series each series is rated as one game, by
    its places on penalty points (R24)."""
    games = sorted(store.games(), key=lambda g: g.game_id)
    rated = [
        RatedGame(places={s.bot: s.place for s in game.seats}, block=game.block)
        for game in games if series_of(game.game_id) is None
    ]
    series = series_results(series_game(g) for g in games if series_of(g.game_id) is not None)
    rated += [RatedGame(places=one.places(), block=one.block) for one in series]
    return rated
