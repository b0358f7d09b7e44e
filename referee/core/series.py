"""Series results (R24): penalty points per game, totals per series, places by total.

The scoring of one game is ``referee.rules.formats``; this module adds it up over played
games, by bot: the games of ``taki-referee match --series`` and of a league of series
(``GameOutcome.series_game`` and ``referee.league.store`` make the :class:`SeriesGame`
of each)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from referee.core.schedule import series_of
from referee.rules import SeriesRules, competition_places, seat_penalties


@attrs.frozen
class SeriesGame:
    """What a series needs of one game: who sat where, the points left in each hand,
    the winner and the seats that forfeited."""

    game_id: str
    block: str
    bots: tuple[str, ...]
    points: tuple[int, ...]
    winner: int | None
    forfeited: frozenset[int]


@attrs.frozen
class SeriesStanding:
    bot: str
    #: Penalty points over the series: the lowest total wins.
    penalty: int
    place: int

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "penalty": self.penalty, "place": self.place}


@attrs.frozen
class SeriesResult:
    """One series: its games in order, and the bots by place."""

    name: str
    #: The duplicate block of the series (the series of every seating of its deals).
    block: str
    games: tuple[str, ...]
    standings: tuple[SeriesStanding, ...]

    def to_json(self) -> dict[str, Any]:
        return {"games": list(self.games), "standings": [s.to_json() for s in self.standings]}

    def places(self) -> dict[str, int]:
        return {s.bot: s.place for s in self.standings}


#: R24's series: the winner scores -100, a forfeit adds 100 (D10).
STANDARD = SeriesRules()


def series_results(
    games: Iterable[SeriesGame], rules: SeriesRules = STANDARD
) -> list[SeriesResult]:
    """The series the ``games`` belong to (``referee.core.schedule.series_of``), in the
    order of their first game, each game counted in the order given. A series cut
    short (``--games``, or a league still running) counts the games it has."""
    groups: dict[str, list[SeriesGame]] = {}
    for game in games:
        name = series_of(game.game_id)
        if name is None:
            raise ValueError(f"{game.game_id} is not a game of a series")
        groups.setdefault(name, []).append(game)
    return [_result(name, played, rules) for name, played in groups.items()]


def _result(name: str, games: Sequence[SeriesGame], rules: SeriesRules) -> SeriesResult:
    totals: dict[str, int] = {}
    for game in games:
        penalties = seat_penalties(game.points, game.winner, game.forfeited, rules)
        for bot, penalty in zip(game.bots, penalties, strict=True):
            totals[bot] = totals.get(bot, 0) + penalty
    bots = list(totals)
    places = competition_places([totals[b] for b in bots])
    standings = sorted(
        (SeriesStanding(bot, totals[bot], place)
         for bot, place in zip(bots, places, strict=True)),
        key=lambda s: (s.place, s.bot),
    )
    return SeriesResult(name, games[0].block, tuple(g.game_id for g in games),
                        tuple(standings))
