"""Match formats as pure logic (R24): a single game, a series with penalty points, and
the Pyramid Tournament (a rule flag of the game itself: ``Rules(pyramid=True)``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import attrs

from .results import GameResult

FORMATS = ("single", "series", "pyramid")


def first_seat(game_index: int, players: int) -> int:
    """R3: a match rotates the first seat from game to game."""
    return game_index % players


@attrs.frozen
class SeriesRules:
    """A series of games scored with penalty points; the lowest total wins."""

    games: int = attrs.field(default=6, validator=attrs.validators.ge(1))
    winner_points: int = -100
    #: Added to a forfeiting seat's hand points for that game.
    forfeit_points: int = attrs.field(default=100, validator=attrs.validators.ge(0))


def penalty_points(result: GameResult, rules: SeriesRules) -> tuple[int, ...]:
    """The penalty points each seat scores for one game of a series."""
    return seat_penalties(result.points, result.winner,
                          {f.seat for f in result.forfeits}, rules)


def seat_penalties(
    points: Sequence[int], winner: int | None, forfeited: Collection[int], rules: SeriesRules
) -> tuple[int, ...]:
    """R24 and D10: the winner scores ``winner_points``, a seat that forfeited its hand
    points plus ``forfeit_points``, everyone else the points left in hand."""
    out = []
    for seat, left in enumerate(points):
        if seat == winner:
            out.append(rules.winner_points)
        elif seat in forfeited:
            out.append(left + rules.forfeit_points)
        else:
            out.append(left)
    return tuple(out)


@attrs.define
class Series:
    """Running totals of a series between fixed seats."""

    players: int
    rules: SeriesRules = SeriesRules()
    totals: list[int] = attrs.field(init=False)
    played: int = attrs.field(init=False, default=0)

    def __attrs_post_init__(self) -> None:
        self.totals = [0] * self.players

    @property
    def finished(self) -> bool:
        return self.played >= self.rules.games

    def next_first_seat(self) -> int:
        return first_seat(self.played, self.players)

    def record(self, result: GameResult) -> tuple[int, ...]:
        if self.finished:
            raise ValueError("the series is already over")
        points = penalty_points(result, self.rules)
        for seat, p in enumerate(points):
            self.totals[seat] += p
        self.played += 1
        return points

    def places(self) -> tuple[int, ...]:
        """Lowest total first; equal totals share a place."""
        return competition_places(self.totals)


def competition_places(scores: Sequence[int]) -> tuple[int, ...]:
    """Places for scores where lower is better, ties sharing a place (1, 2, 2, 4)."""
    return tuple(1 + sum(1 for other in scores if other < s) for s in scores)
