"""A league's leaderboard: Elo with bootstrap intervals over duplicate blocks, the crosstable
and the likelihood of superiority, from the games' rankings. Pure.

The Elo comes from one of two models (:data:`RATING_MODELS`): the pairwise Bradley-Terry
fit of :mod:`referee.ratings.elo` or the ranking fit of :mod:`referee.ratings.plackett_luce`;
:func:`default_model` picks one from the table sizes."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import TypeAlias

import attrs

from referee.ratings.elo import (
    RatedGame,
    Tally,
    anchored,
    check_fit_args,
    fit_pairwise,
    likelihood_of_superiority,
    tally_games,
)
from referee.ratings.models import MULTIPLAYER_MODEL, RATING_MODELS, RatingModel
from referee.ratings.plackett_luce import fit_rankings, rankings_of

__all__ = [
    "MULTIPLAYER_MODEL",
    "RATING_MODELS",
    "BotRating",
    "PairRecord",
    "RatingModel",
    "RatingReport",
    "default_model",
    "rate",
]



def default_model(games: Sequence[RatedGame]) -> RatingModel:
    """Bradley-Terry when every game is heads-up (the two models then agree, and the
    pairwise fit is quicker), else :data:`MULTIPLAYER_MODEL`."""
    return "bradley-terry" if all(len(g.places) == 2 for g in games) else MULTIPLAYER_MODEL


@attrs.frozen
class PairRecord:
    """Pairwise results of one bot against one opponent (from the bot's side)."""

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Fraction of the points won; 0.5 when the pair never met."""
        return self.points / self.games if self.games else 0.5


@attrs.frozen
class BotRating:
    """One bot's line of a :class:`RatingReport`.

    ``games`` counts games played; ``score`` is the fraction of pairwise points
    won over all opponents; ``ci95`` is the bootstrap percentile interval, or
    ``None`` when no bootstrap was run.
    """

    name: str
    elo: float
    ci95: tuple[float, float] | None
    games: int
    score: float


@attrs.frozen
class RatingReport:
    """Result of :func:`rate`.

    ``bots`` is sorted best first.  ``los[a][b]`` is the likelihood that ``a`` is
    stronger than ``b`` (every ordered pair of distinct bots).  ``crosstable[a][b]``
    holds the pairwise record of ``a`` against ``b`` for the pairs that met.
    ``resamples`` is the number of bootstrap resamples behind the intervals; ``model``
    the model of the fit.
    """

    bots: tuple[BotRating, ...]
    los: Mapping[str, Mapping[str, float]] = attrs.field(hash=False)
    crosstable: Mapping[str, Mapping[str, PairRecord]] = attrs.field(hash=False)
    resamples: int
    anchor: str | None
    anchor_elo: float
    model: RatingModel = "bradley-terry"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bots)

    def bot(self, name: str) -> BotRating:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (pos - lo) * (sorted_values[hi] - sorted_values[lo])


# The strengths of a league's bots with its blocks weighted (None: each once), starting
# from a point (None: all 0); None when there is no finite fit.
_Fit: TypeAlias = Callable[[Sequence[int] | None, Sequence[float] | None], list[float] | None]


def rate(
    games: Sequence[RatedGame],
    *,
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    resamples: int = 200,
    seed: int = 0,
    prior: float = 1.0,
    model: RatingModel | None = None,
) -> RatingReport:
    """Rate a league: Elo fit, bootstrap 95% intervals, LOS matrix and crosstable.

    ``model`` is one of :data:`RATING_MODELS`, or ``None`` for :func:`default_model`.
    The intervals come from ``resamples`` bootstrap resamples of the duplicate
    blocks drawn from ``random.Random(seed)``; each resample is refitted and
    anchored like the point estimate, and the 2.5% / 97.5% percentiles are
    reported (the anchor bot's interval is degenerate).  ``resamples=0`` skips
    the bootstrap.  With ``prior=0`` resamples without a finite fit are dropped.
    """
    if resamples < 0:
        raise ValueError("resamples must be >= 0")
    if model is None:
        model = default_model(games)
    elif model not in RATING_MODELS:
        raise ValueError(f"unknown rating model {model!r} (known: {', '.join(RATING_MODELS)})")
    tally = tally_games(games)
    names = tally.names
    n = len(names)
    anchor_index = check_fit_args(names, anchor, prior)
    fit: _Fit = (partial(fit_rankings, rankings_of(games, names), tally, prior)
                 if model == "plackett-luce" else partial(fit_pairwise, tally, prior))
    theta_hat = fit(None, None) if n else []
    if theta_hat is None:
        raise ValueError("no finite maximum-likelihood fit without a prior (perfect separation)")
    elos = anchored(theta_hat, anchor_index, anchor_elo) if n else []

    samples = _bootstrap(fit, theta_hat, len(tally.blocks), resamples if n else 0, seed,
                         lambda theta: anchored(theta, anchor_index, anchor_elo))
    used = len(samples)

    bots = []
    for i, name in enumerate(names):
        ci: tuple[float, float] | None = None
        if used:
            ordered = sorted(sample[i] for sample in samples)
            ci = (_percentile(ordered, 0.025), _percentile(ordered, 0.975))
        pts = sum(tally.wins[i]) + 0.5 * sum(tally.draws[i])
        total = pts + sum(tally.wins[j][i] + 0.5 * tally.draws[j][i] for j in range(n))
        bots.append(BotRating(name, elos[i], ci, tally.games[i], pts / total if total else 0.5))
    bots.sort(key=lambda b: (-b.elo, b.name))

    los, table = _pair_tables(names, tally)
    return RatingReport(
        bots=tuple(bots),
        los=MappingProxyType(los),
        crosstable=MappingProxyType(table),
        resamples=used,
        anchor=anchor,
        anchor_elo=anchor_elo,
        model=model,
    )


def _bootstrap(
    fit: _Fit,
    theta_hat: Sequence[float],
    n_blocks: int,
    resamples: int,
    seed: int,
    anchored: Callable[[list[float]], list[float]],
) -> list[list[float]]:
    """The anchored Elo of every bot in each resample of the duplicate blocks (drawn
    from ``random.Random(seed)``) that has a finite fit."""
    rng = random.Random(seed)
    block_ids = range(n_blocks)
    found: list[list[float]] = []
    for _ in range(resamples):
        weight = [0] * n_blocks
        for b in rng.choices(block_ids, k=n_blocks):
            weight[b] += 1
        theta = fit(weight, theta_hat)
        if theta is not None:
            found.append(anchored(theta))
    return found


def _pair_tables(
    names: Sequence[str], tally: Tally
) -> tuple[dict[str, Mapping[str, float]], dict[str, Mapping[str, PairRecord]]]:
    """The likelihood of superiority of every pair, and the crosstable."""
    los: dict[str, Mapping[str, float]] = {}
    table: dict[str, Mapping[str, PairRecord]] = {}
    for i, a in enumerate(names):
        row_los: dict[str, float] = {}
        row_table: dict[str, PairRecord] = {}
        for j, opponent in enumerate(names):
            if i == j:
                continue
            w, d, lost = tally.wins[i][j], tally.draws[i][j], tally.wins[j][i]
            row_los[opponent] = likelihood_of_superiority(w, lost)
            if w + d + lost:
                row_table[opponent] = PairRecord(w, d, lost)
        los[a] = MappingProxyType(row_los)
        table[a] = MappingProxyType(row_table)
    return los, table
