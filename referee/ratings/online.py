"""Ratings updated game by game, with their uncertainty: what a ladder shows and plays
by between two full fits (``referee.ratings.leaderboard.rate``). Pure.

Each bot has a normal belief about its strength, a mean and a standard deviation in Elo.
A finished game moves the beliefs of its bots by the Bradley-Terry "full pair" update
of Weng and Lin (A Bayesian Approximation Method for Online Ranking, JMLR 12, 2011):
every pair of the game's bots counts as one pairwise result (a tie for a shared place),
the mean moves by the surprise of that result scaled by the bot's variance, and the
variance shrinks by the information the result carried. It costs a few operations per
pair of seats, so a ladder updates its ratings as every game lands.

With the defaults, a pair whose beliefs are certain has the logistic Elo curve of the
full fit: a bot 400 Elo stronger wins 10 games of 11.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import attrs

from referee.ratings.elo import ELO_PER_NAT, Z95

__all__ = ["INITIAL_ELO", "INITIAL_SIGMA", "Belief", "OnlineRatings", "misorder"]

#: Where a new bot starts, and how unsure of it the ratings are (Elo).
INITIAL_ELO = 1500.0
INITIAL_SIGMA = 350.0
#: The spread of one game's performance: two of them make the logistic Elo scale.
BETA = ELO_PER_NAT / math.sqrt(2.0)
#: The least factor a game may leave of a variance (keeps it positive).
KAPPA = 1e-4


@attrs.frozen
class Belief:
    """What the ratings believe of one bot: its Elo, how unsure they are of it (one
    standard deviation), and the games it was rated in."""

    mu: float = INITIAL_ELO
    sigma: float = INITIAL_SIGMA
    games: int = 0

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% interval of its Elo."""
        return (self.mu - Z95 * self.sigma, self.mu + Z95 * self.sigma)


def _logistic(x: float) -> float:
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def misorder(a: Belief, b: Belief) -> float:
    """How likely the ratings have ``a`` and ``b`` in the wrong order: the chance that
    the true difference of their strengths has the other sign than the difference of
    their means (0.5 when the means are equal)."""
    spread = math.sqrt(a.sigma ** 2 + b.sigma ** 2)
    if spread == 0.0:
        return 0.5 if a.mu == b.mu else 0.0
    return 0.5 * math.erfc(abs(a.mu - b.mu) / spread / math.sqrt(2.0))


class OnlineRatings:
    """The beliefs of a field of bots, updated game by game (:meth:`update`)."""

    def __init__(self, initial: Belief = Belief(), *,
                 beliefs: Mapping[str, Belief] | None = None) -> None:
        """A field rated from scratch, or from the ``beliefs`` of an earlier point (kept,
        e.g. the season's aggregates): rating the games after that point then gives the
        beliefs that rating every game from the first would."""
        self.initial = initial
        self._beliefs: dict[str, Belief] = dict(beliefs or {})

    def belief(self, bot: str) -> Belief:
        """The belief of ``bot``: the initial one for a bot never rated."""
        return self._beliefs.get(bot, self.initial)

    def beliefs(self) -> dict[str, Belief]:
        """Every rated bot's belief."""
        return dict(self._beliefs)

    def update(self, places: Mapping[str, int]) -> None:
        """Rate one finished game: each bot's place, 1 the best (tied bots share one)."""
        if len(places) < 2:
            raise ValueError("a game needs at least two players")
        bots = list(places)
        before = {bot: self.belief(bot) for bot in bots}
        for bot in bots:
            me = before[bot]
            variance = me.sigma ** 2
            shift = 0.0
            shrink = 0.0
            for other in bots:
                if other == bot:
                    continue
                them = before[other]
                c = math.sqrt(variance + them.sigma ** 2 + 2.0 * BETA ** 2)
                p = _logistic((me.mu - them.mu) / c)
                if places[bot] < places[other]:
                    score = 1.0
                elif places[bot] == places[other]:
                    score = 0.5
                else:
                    score = 0.0
                shift += variance / c * (score - p)
                shrink += (me.sigma / c) * variance / c ** 2 * p * (1.0 - p)
            self._beliefs[bot] = Belief(
                mu=me.mu + shift,
                sigma=math.sqrt(variance * max(1.0 - shrink, KAPPA)),
                games=me.games + 1,
            )

    def update_all(self, games: Iterable[Mapping[str, int]]) -> None:
        for places in games:
            self.update(places)
