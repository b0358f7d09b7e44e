"""Elo from league results: a maximum-likelihood Bradley-Terry fit over all games
(:func:`fit_elo`), the Elo and score conversions, and the likelihood of superiority.

The package's other modules build on it: :mod:`referee.ratings.leaderboard`
(:func:`~referee.ratings.leaderboard.rate`: bootstrap intervals over duplicate blocks,
a likelihood-of-superiority matrix and a crosstable) and :mod:`referee.ratings.sprt`
(a generalized sequential probability ratio test on heads-up duplicate pairs,
pentanomial model, logistic Elo).

The module is pure: no I/O, no clock, and the only randomness is the
bootstrap's, drawn from ``random.Random(seed)``.  The models and formulas are
described in ``docs/ratings.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TypeAlias

import attrs

from referee.ratings.newton import maximize

__all__ = [
    "ELO_PER_NAT",
    "Z95",
    "Block",
    "RatedGame",
    "Tally",
    "anchored",
    "block_key",
    "check_fit_args",
    "elo_to_score",
    "fit_elo",
    "fit_pairwise",
    "likelihood_of_superiority",
    "mle_exists",
    "normal_cdf",
    "score_to_elo",
    "tally_games",
    "weighted_pairs",
]

#: Elo points per natural-log unit of strength: 400 / ln(10).
ELO_PER_NAT = 400.0 / math.log(10.0)
#: Two-sided 95% quantile of the standard normal distribution.
Z95 = 1.959963984540054

Block: TypeAlias = str | int


# ---------------------------------------------------------------------------
# Elo scale helpers
# ---------------------------------------------------------------------------


def _sigmoid(x: float) -> float:
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log_sigmoid(x: float) -> float:
    if x >= 0.0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def normal_cdf(x: float) -> float:
    """Standard normal cumulative distribution function."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def elo_to_score(elo: float) -> float:
    """Expected score of a player ``elo`` points stronger: 1 / (1 + 10^(-elo/400))."""
    return _sigmoid(elo / ELO_PER_NAT)


def score_to_elo(score: float) -> float:
    """Inverse of :func:`elo_to_score`; -inf / +inf at the scores 0 / 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return ELO_PER_NAT * math.log(score / (1.0 - score))


def likelihood_of_superiority(wins: float, losses: float) -> float:
    """LOS = Phi((W - L) / sqrt(W + L)); draws carry no information. 0.5 without decisive games."""
    if wins + losses <= 0:
        return 0.5
    return normal_cdf((wins - losses) / math.sqrt(wins + losses))


# ---------------------------------------------------------------------------
# League input and results
# ---------------------------------------------------------------------------


def _freeze_places(places: Mapping[str, int]) -> Mapping[str, int]:
    return MappingProxyType(dict(places))


@attrs.frozen
class RatedGame:
    """One finished game: each bot's place (1 = best, tied bots share a place).

    ``block`` groups the games of one duplicate block (the same deal replayed
    with the seats rotated); the bootstrap resamples whole blocks.  ``None``
    makes the game a block of its own.
    """

    places: Mapping[str, int] = attrs.field(converter=_freeze_places, hash=False)
    block: Block | None = None

    def __attrs_post_init__(self) -> None:
        if len(self.places) < 2:
            raise ValueError("a game needs at least two players")
        for name, place in self.places.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"bot names must be non-empty strings, got {name!r}")
            if isinstance(place, bool) or not isinstance(place, int) or place < 1:
                raise ValueError(f"place of {name!r} must be an int >= 1, got {place!r}")


# ---------------------------------------------------------------------------
# Tally of pairwise results
# ---------------------------------------------------------------------------

# A block's contribution: (pair index, points of the lower-indexed bot, pair games).
_Contribution: TypeAlias = list[tuple[int, float, float]]


@attrs.define
class Tally:
    names: list[str]
    games: list[int]
    wins: list[list[int]]  # wins[i][j]: pairwise wins of i over j
    draws: list[list[int]]
    pairs: list[tuple[int, int]]  # (i, j) with i < j, for every pair that met
    points: list[float]  # points of i in pair p
    counts: list[float]  # pairwise games in pair p
    blocks: list[_Contribution]


def block_key(game: RatedGame, position: int) -> tuple[str, Block | int]:
    """The bootstrap's unit of the game at ``position``: its block, or the game alone."""
    return ("block", game.block) if game.block is not None else ("game", position)


def tally_games(games: Sequence[RatedGame]) -> Tally:
    names = sorted({name for g in games for name in g.places})
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    played = [0] * n
    wins = [[0] * n for _ in range(n)]
    draws = [[0] * n for _ in range(n)]
    pair_index: dict[tuple[int, int], int] = {}
    block_pairs: dict[tuple[str, Block | int], dict[int, list[float]]] = {}
    for k, game in enumerate(games):
        acc = block_pairs.setdefault(block_key(game, k), {})
        seats = sorted((index[name], place) for name, place in game.places.items())
        for a, (i, place_i) in enumerate(seats):
            played[i] += 1
            for j, place_j in seats[a + 1 :]:
                if place_i < place_j:
                    wins[i][j] += 1
                    pts = 1.0
                elif place_i > place_j:
                    wins[j][i] += 1
                    pts = 0.0
                else:
                    draws[i][j] += 1
                    draws[j][i] += 1
                    pts = 0.5
                p = pair_index.setdefault((i, j), len(pair_index))
                cell = acc.setdefault(p, [0.0, 0.0])
                cell[0] += pts
                cell[1] += 1.0
    pairs = sorted(pair_index, key=pair_index.__getitem__)
    points = [0.0] * len(pairs)
    counts = [0.0] * len(pairs)
    blocks: list[_Contribution] = []
    for acc in block_pairs.values():
        contribution = [(p, cell[0], cell[1]) for p, cell in acc.items()]
        blocks.append(contribution)
        for p, pts, cnt in contribution:
            points[p] += pts
            counts[p] += cnt
    return Tally(names, played, wins, draws, pairs, points, counts, blocks)


# ---------------------------------------------------------------------------
# Bradley-Terry maximum likelihood
# ---------------------------------------------------------------------------


def mle_exists(
    n: int, pairs: Sequence[tuple[int, int]], points: Sequence[float], counts: Sequence[float]
) -> bool:
    """Without a prior the MLE is finite iff the 'scored against' digraph is strongly connected."""
    if n <= 1:
        return True
    forward: list[list[int]] = [[] for _ in range(n)]
    backward: list[list[int]] = [[] for _ in range(n)]
    for (i, j), pts, cnt in zip(pairs, points, counts, strict=True):
        if pts > 0:  # i scored against j
            forward[i].append(j)
            backward[j].append(i)
        if cnt - pts > 0:  # j scored against i
            forward[j].append(i)
            backward[i].append(j)
    for graph in (forward, backward):
        seen = {0}
        stack = [0]
        while stack:
            for nxt in graph[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        if len(seen) < n:
            return False
    return True


def _fit_theta(
    n: int,
    pairs: Sequence[tuple[int, int]],
    points: Sequence[float],
    counts: Sequence[float],
    prior: float,
    start: Sequence[float] | None = None,
) -> list[float] | None:
    """Maximize the Bradley-Terry log-likelihood (natural-log strengths) by damped Newton.

    With ``prior > 0`` every bot also plays ``prior`` virtual games, scoring half,
    against a virtual opponent of strength 0; the objective is then strictly
    concave and the optimum finite.  With ``prior == 0`` bot 0 is pinned at 0 and
    ``None`` is returned when no finite maximum exists.
    """
    if prior == 0.0 and not mle_exists(n, pairs, points, counts):
        return None
    theta = list(start) if start is not None else [0.0] * n
    free = list(range(n)) if prior > 0.0 else list(range(1, n))
    if not free:
        return theta
    half = 0.5 * prior

    def objective(t: Sequence[float]) -> float:
        total = 0.0
        for (i, j), pts, cnt in zip(pairs, points, counts, strict=True):
            if cnt:
                d = t[i] - t[j]
                total += pts * _log_sigmoid(d) + (cnt - pts) * _log_sigmoid(-d)
        if prior:
            total += sum(half * (_log_sigmoid(x) + _log_sigmoid(-x)) for x in t)
        return total

    def derivatives(t: Sequence[float]) -> tuple[list[float], list[list[float]]]:
        grad = [0.0] * n
        hess = [[0.0] * n for _ in range(n)]  # negated Hessian
        for (i, j), pts, cnt in zip(pairs, points, counts, strict=True):
            if cnt:
                p = _sigmoid(t[i] - t[j])
                g = pts - cnt * p
                h = cnt * p * (1.0 - p)
                grad[i] += g
                grad[j] -= g
                hess[i][i] += h
                hess[j][j] += h
                hess[i][j] -= h
                hess[j][i] -= h
        if prior:
            for i in range(n):
                p = _sigmoid(t[i])
                grad[i] += half - prior * p
                hess[i][i] += prior * p * (1.0 - p)
        return grad, hess

    return maximize(theta, free, objective, derivatives)


def weighted_pairs(
    tally: Tally, weights: Sequence[int] | None
) -> tuple[list[float], list[float]]:
    """Points and pairwise games of every pair, each block counted ``weights[b]`` times
    (once each without ``weights``)."""
    if weights is None:
        return tally.points, tally.counts
    points = [0.0] * len(tally.pairs)
    counts = [0.0] * len(tally.pairs)
    for contribution, k in zip(tally.blocks, weights, strict=True):
        if k:
            for p, pts, cnt in contribution:
                points[p] += k * pts
                counts[p] += k * cnt
    return points, counts


def fit_pairwise(
    tally: Tally,
    prior: float,
    weights: Sequence[int] | None = None,
    start: Sequence[float] | None = None,
) -> list[float] | None:
    """The Bradley-Terry strengths of the tally's bots, blocks weighted as in
    :func:`weighted_pairs`; ``None`` without a finite fit (only when ``prior == 0``)."""
    points, counts = weighted_pairs(tally, weights)
    return _fit_theta(len(tally.names), tally.pairs, points, counts, prior, start)


def anchored(theta: Sequence[float], anchor: int | None, anchor_elo: float) -> list[float]:
    elos = [x * ELO_PER_NAT for x in theta]
    ref = elos[anchor] if anchor is not None else sum(elos) / len(elos)
    return [e - ref + anchor_elo for e in elos]


def check_fit_args(names: Sequence[str], anchor: str | None, prior: float) -> int | None:
    if not (prior >= 0.0 and math.isfinite(prior)):
        raise ValueError(f"prior must be a finite number >= 0, got {prior!r}")
    if anchor is None:
        return None
    if anchor not in names:
        raise ValueError(f"anchor bot {anchor!r} played no game")
    return names.index(anchor)


def fit_elo(
    games: Sequence[RatedGame],
    *,
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    prior: float = 1.0,
) -> dict[str, float]:
    """Point estimate of every bot's Elo (Bradley-Terry MLE over the pairwise results).

    The mean rating is ``anchor_elo``, or the ``anchor`` bot is fixed at it.
    ``prior`` is the number of virtual games each bot draws against the centre
    of the field; ``0`` gives the plain MLE and raises ``ValueError`` if that
    is not finite (a bot or group of bots that never lost or never won).
    """
    tally = tally_games(games)
    anchor_index = check_fit_args(tally.names, anchor, prior)
    if not tally.names:
        return {}
    theta = _fit_theta(len(tally.names), tally.pairs, tally.points, tally.counts, prior)
    if theta is None:
        raise ValueError("no finite maximum-likelihood fit without a prior (perfect separation)")
    return dict(zip(tally.names, anchored(theta, anchor_index, anchor_elo), strict=True))


