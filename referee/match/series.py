"""Series results (R24): penalty points per game, totals per series, places by total.

The pure scoring is ``referee.rules.formats``; this module adds it up over the outcomes
of played games, by bot, for ``taki-referee match --series``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from referee.core.schedule import series_of
from referee.match.game import GameOutcome
from referee.rules.formats import SeriesRules, competition_places, seat_penalties


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
    games: tuple[str, ...]
    standings: tuple[SeriesStanding, ...]

    def to_json(self) -> dict[str, Any]:
        return {"games": list(self.games), "standings": [s.to_json() for s in self.standings]}


#: R24's series: the winner scores -100, a forfeit adds 100 (D10).
STANDARD = SeriesRules()


def series_results(
    outcomes: Sequence[GameOutcome], rules: SeriesRules = STANDARD
) -> list[SeriesResult]:
    """The series of ``outcomes`` (games of ``referee.core.schedule.series_games``),
    in the order of their first game. Every game of a series counts, including one a
    series cut short by ``--games`` did not get to finish."""
    groups: dict[str, list[GameOutcome]] = {}
    for outcome in outcomes:
        name = series_of(outcome.game.game_id)
        if name is None:
            raise ValueError(f"{outcome.game.game_id} is not a game of a series")
        groups.setdefault(name, []).append(outcome)
    results = []
    for name, games in groups.items():
        totals: dict[str, int] = {}
        for outcome in games:
            seats = sorted(outcome.seats, key=lambda s: s.seat)
            forfeited = {s.seat for s in seats if s.forfeit is not None}
            penalties = seat_penalties([s.points for s in seats], outcome.winner, forfeited,
                                       rules)
            for seat, penalty in zip(seats, penalties, strict=True):
                totals[seat.bot] = totals.get(seat.bot, 0) + penalty
        bots = list(totals)
        places = competition_places([totals[b] for b in bots])
        standings = sorted(
            (SeriesStanding(bot, totals[bot], place) for bot, place in zip(bots, places,
                                                                            strict=True)),
            key=lambda s: (s.place, s.bot),
        )
        results.append(SeriesResult(name, tuple(o.game.game_id for o in games),
                                    tuple(standings)))
    return results
