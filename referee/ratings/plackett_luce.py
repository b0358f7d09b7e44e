"""Elo from whole rankings: a maximum-likelihood Plackett-Luce fit (:func:`fit_plackett_luce`).

Where the Bradley-Terry fit of :mod:`referee.ratings.elo` splits a game into its pairs,
this model reads the ranking as a sequence of choices: first place is chosen among all
the players with probability proportional to ``exp(theta)``, second among the rest, and
so on.  Tied bots are ranked in every order their tie allows, each order weighing the
same (the log-likelihood is the average over those orders), which for two players is the
half point of a draw.  The prior, the anchoring and the Elo scale are those of the
Bradley-Terry fit, so on 2-player tables the two fits are the same.  docs/ratings.md
describes the model; :func:`referee.ratings.leaderboard.rate` adds bootstrap intervals.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import attrs

from referee.ratings.elo import (
    Block,
    RatedGame,
    Tally,
    anchored,
    block_key,
    check_fit_args,
    mle_exists,
    tally_games,
    weighted_pairs,
)
from referee.ratings.newton import maximize

__all__ = ["Rankings", "fit_plackett_luce", "fit_rankings", "rankings_of"]

# A block's contribution: (bot, times chosen) and (choice set index, weight).
_Contribution = tuple[list[tuple[int, float]], list[tuple[int, float]]]


@attrs.define
class Rankings:
    """The games as choices: ``sets[s]`` is a set of bots (indices into the pairwise
    tally's names, sorted, at least two) that a choice was made from."""

    sets: list[tuple[int, ...]]
    blocks: list[_Contribution]


def _add_ranking(
    index: Mapping[str, int],
    places: Mapping[str, int],
    chosen: dict[int, float],
    sets: dict[tuple[int, ...], float],
) -> None:
    """Add one game's log-likelihood terms: ``chosen[i]`` multiplies ``theta_i`` and
    ``sets[T]`` multiplies ``-log(sum of exp(theta_j), j in T)``.

    A tie of ``d`` bots, with ``rest`` ranked below them, is the average over the ``d!``
    orders of the tied bots: each of them is chosen once, and the choice set after ``l``
    of them is ``rest`` plus ``d - l`` of them, each such subset with probability
    ``1 / comb(d, d - l)``.  A choice from one bot is certain: its term cancels.
    """
    by_place: dict[int, list[int]] = {}
    for name, place in places.items():
        by_place.setdefault(place, []).append(index[name])
    remaining = sorted(index[name] for name in places)
    for place in sorted(by_place):
        tied = sorted(by_place[place])
        rest = [i for i in remaining if i not in tied]
        for i in tied:
            chosen[i] = chosen.get(i, 0.0) + 1.0
        for size in range(len(tied), 0, -1):
            share = 1.0 / math.comb(len(tied), size)
            for subset in itertools.combinations(tied, size):
                members = tuple(sorted(rest + list(subset)))
                if len(members) == 1:
                    chosen[members[0]] -= share
                else:
                    sets[members] = sets.get(members, 0.0) + share
        remaining = rest


def rankings_of(games: Sequence[RatedGame], names: Sequence[str]) -> Rankings:
    index = {name: i for i, name in enumerate(names)}
    set_index: dict[tuple[int, ...], int] = {}
    by_block: dict[tuple[str, Block | int], tuple[dict[int, float], dict[int, float]]] = {}
    for k, game in enumerate(games):
        chosen, weights = by_block.setdefault(block_key(game, k), ({}, {}))
        game_sets: dict[tuple[int, ...], float] = {}
        _add_ranking(index, game.places, chosen, game_sets)
        for members, weight in game_sets.items():
            s = set_index.setdefault(members, len(set_index))
            weights[s] = weights.get(s, 0.0) + weight
    blocks = [(list(chosen.items()), list(weights.items())) for chosen, weights in
              by_block.values()]
    return Rankings(sorted(set_index, key=set_index.__getitem__), blocks)


def _log_sum_exp(theta: Sequence[float], members: Sequence[int]) -> float:
    top = max(theta[j] for j in members)
    return top + math.log(sum(math.exp(theta[j] - top) for j in members))


def fit_rankings(
    rankings: Rankings,
    tally: Tally,
    prior: float,
    weights: Sequence[int] | None = None,
    start: Sequence[float] | None = None,
) -> list[float] | None:
    """Maximize the Plackett-Luce log-likelihood (natural-log strengths) by damped Newton,
    each block counted ``weights[b]`` times (once each without ``weights``).

    ``tally`` is the pairwise tally of the same games, which says whether a finite
    maximum exists without a prior.  With ``prior > 0`` every bot draws ``prior``
    virtual 2-player games against a virtual opponent of strength 0 (the prior of the
    Bradley-Terry fit); with ``prior == 0`` bot 0 is pinned at 0 and ``None`` is
    returned when no finite maximum exists.
    """
    n = len(tally.names)
    if prior == 0.0 and not mle_exists(n, tally.pairs, *weighted_pairs(tally, weights)):
        return None
    chosen = [0.0] * (n + 1)  # the last is the virtual opponent's, pinned at 0
    set_weight = [0.0] * len(rankings.sets)
    for b, (bots, sets) in enumerate(rankings.blocks):
        k = 1 if weights is None else weights[b]
        if k:
            for i, times in bots:
                chosen[i] += k * times
            for s, weight in sets:
                set_weight[s] += k * weight
    terms = [(m, w) for m, w in zip(rankings.sets, set_weight, strict=True) if w]
    if prior:
        terms.extend(((i, n), prior) for i in range(n))
        for i in range(n):
            chosen[i] += 0.5 * prior
    theta = [*(start if start is not None else [0.0] * n), 0.0]
    free = list(range(n)) if prior > 0.0 else list(range(1, n))

    def objective(t: Sequence[float]) -> float:
        total = sum(a * x for a, x in zip(chosen, t, strict=True))
        return total - sum(w * _log_sum_exp(t, members) for members, w in terms)

    def derivatives(t: Sequence[float]) -> tuple[list[float], list[list[float]]]:
        grad = list(chosen)
        hess = [[0.0] * (n + 1) for _ in range(n + 1)]  # negated Hessian
        for members, w in terms:
            top = max(t[j] for j in members)
            exps = [math.exp(t[j] - top) for j in members]
            total = sum(exps)
            probs = [w * e / total for e in exps]  # the expected choices, times w
            for a, j in enumerate(members):
                grad[j] -= probs[a]
                row = hess[j]
                row[j] += probs[a]
                share = probs[a] / w
                for b, k in enumerate(members):
                    row[k] -= share * probs[b]
        return grad, hess

    return maximize(theta, free, objective, derivatives)[:n]


def fit_plackett_luce(
    games: Sequence[RatedGame],
    *,
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    prior: float = 1.0,
) -> dict[str, float]:
    """Point estimate of every bot's Elo (Plackett-Luce MLE over the whole rankings), with
    the arguments and errors of :func:`referee.ratings.elo.fit_elo`."""
    tally = tally_games(games)
    anchor_index = check_fit_args(tally.names, anchor, prior)
    if not tally.names:
        return {}
    theta = fit_rankings(rankings_of(games, tally.names), tally, prior)
    if theta is None:
        raise ValueError("no finite maximum-likelihood fit without a prior (perfect separation)")
    return dict(zip(tally.names, anchored(theta, anchor_index, anchor_elo), strict=True))
