"""Ratings for leagues and statistical gates for regression runs.

Two independent tools:

* :func:`rate` fits Elo ratings to league results with a maximum-likelihood
  Bradley-Terry model over all games, adds bootstrap intervals (resampling
  duplicate blocks), a likelihood-of-superiority matrix and a crosstable.
* :class:`Sprt` and :class:`SprtState` run a generalized sequential probability
  ratio test on heads-up duplicate pairs (pentanomial model, logistic Elo).

The module is pure: no I/O, no clock, and the only randomness is the
bootstrap's, drawn from ``random.Random(seed)``.  The models and formulas are
described in ``docs/ratings.md``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Literal, TypeAlias

import attrs

__all__ = [
    "ELO_PER_NAT",
    "EMPTY_CELL_PSEUDO_COUNT",
    "PAIR_SCORES",
    "Z95",
    "Block",
    "BotRating",
    "GameResult",
    "PairRecord",
    "Pentanomial",
    "PentanomialEstimate",
    "RatingReport",
    "Sprt",
    "SprtState",
    "SprtStatus",
    "elo_to_score",
    "fit_elo",
    "likelihood_of_superiority",
    "pentanomial_llr",
    "rate",
    "score_to_elo",
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


def _phi(x: float) -> float:
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
    return _phi((wins - losses) / math.sqrt(wins + losses))


# ---------------------------------------------------------------------------
# League input and results
# ---------------------------------------------------------------------------


def _freeze_places(places: Mapping[str, int]) -> Mapping[str, int]:
    return MappingProxyType(dict(places))


@attrs.frozen
class GameResult:
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
    ``resamples`` is the number of bootstrap resamples behind the intervals.
    """

    bots: tuple[BotRating, ...]
    los: Mapping[str, Mapping[str, float]] = attrs.field(hash=False)
    crosstable: Mapping[str, Mapping[str, PairRecord]] = attrs.field(hash=False)
    resamples: int
    anchor: str | None
    anchor_elo: float

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bots)

    def bot(self, name: str) -> BotRating:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)


# ---------------------------------------------------------------------------
# Tally of pairwise results
# ---------------------------------------------------------------------------

# A block's contribution: (pair index, points of the lower-indexed bot, pair games).
_Contribution: TypeAlias = list[tuple[int, float, float]]


@attrs.define
class _Tally:
    names: list[str]
    games: list[int]
    wins: list[list[int]]  # wins[i][j]: pairwise wins of i over j
    draws: list[list[int]]
    pairs: list[tuple[int, int]]  # (i, j) with i < j, for every pair that met
    points: list[float]  # points of i in pair p
    counts: list[float]  # pairwise games in pair p
    blocks: list[_Contribution]


def _tally(games: Sequence[GameResult]) -> _Tally:
    names = sorted({name for g in games for name in g.places})
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    played = [0] * n
    wins = [[0] * n for _ in range(n)]
    draws = [[0] * n for _ in range(n)]
    pair_index: dict[tuple[int, int], int] = {}
    block_pairs: dict[tuple[str, Block | int], dict[int, list[float]]] = {}
    for k, game in enumerate(games):
        key = ("block", game.block) if game.block is not None else ("game", k)
        acc = block_pairs.setdefault(key, {})
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
    return _Tally(names, played, wins, draws, pairs, points, counts, blocks)


# ---------------------------------------------------------------------------
# Bradley-Terry maximum likelihood
# ---------------------------------------------------------------------------


def _mle_exists(
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


def _cholesky_solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Solve a x = b for symmetric positive definite ``a``; ``None`` if it is not."""
    m = len(b)
    low = [[0.0] * m for _ in range(m)]
    for i in range(m):
        row_i = low[i]
        for j in range(i + 1):
            row_j = low[j]
            s = a[i][j] - sum(row_i[k] * row_j[k] for k in range(j))
            if i == j:
                if s <= 0.0:
                    return None
                row_i[i] = math.sqrt(s)
            else:
                row_i[j] = s / row_j[j]
    y = [0.0] * m
    for i in range(m):
        y[i] = (b[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * m
    for i in reversed(range(m)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, m))) / low[i][i]
    return x


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
    if prior == 0.0 and not _mle_exists(n, pairs, points, counts):
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

    value = objective(theta)
    for _ in range(200):
        grad = [0.0] * n
        hess = [[0.0] * n for _ in range(n)]  # negated Hessian
        for (i, j), pts, cnt in zip(pairs, points, counts, strict=True):
            if cnt:
                p = _sigmoid(theta[i] - theta[j])
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
                p = _sigmoid(theta[i])
                grad[i] += half - prior * p
                hess[i][i] += prior * p * (1.0 - p)
        g_free = [grad[i] for i in free]
        step = _cholesky_solve([[hess[i][j] for j in free] for i in free], g_free)
        if step is None:  # numerically singular: fall back to gradient ascent
            scale = max(max(hess[i][i] for i in free), 1e-12)
            step = [g / scale for g in g_free]
        biggest = max(abs(s) for s in step)
        if biggest < 1e-6:  # quadratic convergence region: take the full step
            for i, s in zip(free, step, strict=True):
                theta[i] += s
            if biggest < 1e-10:
                return theta
            value = objective(theta)
            continue
        slope = sum(g * s for g, s in zip(g_free, step, strict=True))
        t = 1.0
        while True:
            cand = list(theta)
            for i, s in zip(free, step, strict=True):
                cand[i] += t * s
            cand_value = objective(cand)
            if cand_value >= value + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        theta, value = cand, cand_value
    return theta


def _anchored(theta: Sequence[float], anchor: int | None, anchor_elo: float) -> list[float]:
    elos = [x * ELO_PER_NAT for x in theta]
    ref = elos[anchor] if anchor is not None else sum(elos) / len(elos)
    return [e - ref + anchor_elo for e in elos]


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (pos - lo) * (sorted_values[hi] - sorted_values[lo])


def _check_fit_args(names: Sequence[str], anchor: str | None, prior: float) -> int | None:
    if not (prior >= 0.0 and math.isfinite(prior)):
        raise ValueError(f"prior must be a finite number >= 0, got {prior!r}")
    if anchor is None:
        return None
    if anchor not in names:
        raise ValueError(f"anchor bot {anchor!r} played no game")
    return names.index(anchor)


def fit_elo(
    games: Sequence[GameResult],
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
    tally = _tally(games)
    anchor_index = _check_fit_args(tally.names, anchor, prior)
    if not tally.names:
        return {}
    theta = _fit_theta(len(tally.names), tally.pairs, tally.points, tally.counts, prior)
    if theta is None:
        raise ValueError("no finite maximum-likelihood fit without a prior (perfect separation)")
    return dict(zip(tally.names, _anchored(theta, anchor_index, anchor_elo), strict=True))


def rate(
    games: Sequence[GameResult],
    *,
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    resamples: int = 200,
    seed: int = 0,
    prior: float = 1.0,
) -> RatingReport:
    """Rate a league: Elo fit, bootstrap 95% intervals, LOS matrix and crosstable.

    The intervals come from ``resamples`` bootstrap resamples of the duplicate
    blocks drawn from ``random.Random(seed)``; each resample is refitted and
    anchored like the point estimate, and the 2.5% / 97.5% percentiles are
    reported (the anchor bot's interval is degenerate).  ``resamples=0`` skips
    the bootstrap.  With ``prior=0`` resamples without a finite fit are dropped.
    """
    if resamples < 0:
        raise ValueError("resamples must be >= 0")
    tally = _tally(games)
    names = tally.names
    n = len(names)
    anchor_index = _check_fit_args(names, anchor, prior)
    theta_hat = _fit_theta(n, tally.pairs, tally.points, tally.counts, prior) if n else []
    if theta_hat is None:
        raise ValueError("no finite maximum-likelihood fit without a prior (perfect separation)")
    elos = _anchored(theta_hat, anchor_index, anchor_elo) if n else []

    samples: list[list[float]] = [[] for _ in range(n)]
    used = 0
    if n and resamples:
        rng = random.Random(seed)
        n_blocks = len(tally.blocks)
        block_ids = range(n_blocks)
        n_pairs = len(tally.pairs)
        for _ in range(resamples):
            weight = [0] * n_blocks
            for b in rng.choices(block_ids, k=n_blocks):
                weight[b] += 1
            points = [0.0] * n_pairs
            counts = [0.0] * n_pairs
            for b, k in enumerate(weight):
                if k:
                    for p, pts, cnt in tally.blocks[b]:
                        points[p] += k * pts
                        counts[p] += k * cnt
            theta = _fit_theta(n, tally.pairs, points, counts, prior, start=theta_hat)
            if theta is None:
                continue
            used += 1
            for i, e in enumerate(_anchored(theta, anchor_index, anchor_elo)):
                samples[i].append(e)

    bots = []
    for i, name in enumerate(names):
        ci: tuple[float, float] | None = None
        if used:
            ordered = sorted(samples[i])
            ci = (_percentile(ordered, 0.025), _percentile(ordered, 0.975))
        pts = sum(tally.wins[i]) + 0.5 * sum(tally.draws[i])
        total = pts + sum(tally.wins[j][i] + 0.5 * tally.draws[j][i] for j in range(n))
        bots.append(BotRating(name, elos[i], ci, tally.games[i], pts / total if total else 0.5))
    bots.sort(key=lambda b: (-b.elo, b.name))

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
    return RatingReport(
        bots=tuple(bots),
        los=MappingProxyType(los),
        crosstable=MappingProxyType(table),
        resamples=used,
        anchor=anchor,
        anchor_elo=anchor_elo,
    )


# ---------------------------------------------------------------------------
# SPRT on duplicate pairs (pentanomial GSPRT, logistic Elo)
# ---------------------------------------------------------------------------

SprtStatus: TypeAlias = Literal["H0", "H1", "continue"]
Pentanomial: TypeAlias = tuple[int, int, int, int, int]

#: Possible scores of a duplicate pair (two games); index k of the counts holds score k / 2.
PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)
#: Pseudo-count given to empty pentanomial cells before the LLR is computed.
EMPTY_CELL_PSEUDO_COUNT = 1e-3


def _constrained_mle(probs: Sequence[float], score: float) -> list[float]:
    """Distribution over the five outcomes maximizing sum p_k log q_k with mean ``score``.

    Lagrange: q_k = p_k / (1 + lam * (a_k - score)), with lam the root of
    f(lam) = sum p_k (a_k - score) / (1 + lam * (a_k - score)) = 0.  f decreases
    strictly on the interval where all q_k > 0 and runs from +inf to -inf there,
    so the root is unique; Newton's method kept inside a shrinking bracket
    (bisecting when a step would leave it) finds it.
    """
    dev = [k / 4.0 - score for k in range(5)]
    lo, hi = -1.0 / max(dev), -1.0 / min(dev)
    lam = 0.0
    for _ in range(200):
        value = slope = 0.0
        for p, d in zip(probs, dev, strict=True):
            r = d / (1.0 + lam * d)
            value += p * r
            slope -= p * r * r
        if value > 0.0:
            lo = lam
        elif value < 0.0:
            hi = lam
        else:
            break
        nxt = lam - value / slope
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        if abs(nxt - lam) <= 1e-15 * (1.0 + abs(lam)):
            lam = nxt
            break
        lam = nxt
    q = [p / (1.0 + lam * d) for p, d in zip(probs, dev, strict=True)]
    total = sum(q)
    return [x / total for x in q]


def pentanomial_llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """Generalized log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0).

    ``counts[k]`` is the number of pairs with pair score k / 2.  Empty cells get
    :data:`EMPTY_CELL_PSEUDO_COUNT`; no pairs at all give 0.
    """
    if len(counts) != 5:
        raise ValueError("a pentanomial has five cells")
    if any(c < 0 for c in counts):
        raise ValueError("pentanomial counts must be >= 0")
    if sum(counts) == 0:
        return 0.0
    reg = [c if c > 0 else EMPTY_CELL_PSEUDO_COUNT for c in counts]
    total = sum(reg)
    probs = [c / total for c in reg]
    q0 = _constrained_mle(probs, elo_to_score(elo0))
    q1 = _constrained_mle(probs, elo_to_score(elo1))
    return sum(c * math.log(b / a) for c, a, b in zip(reg, q0, q1, strict=True))


def _check_probability(_inst: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(f"{attribute.name} must be in (0, 1), got {value!r}")


@attrs.frozen
class Sprt:
    """SPRT of H0: Elo = elo0 against H1: Elo = elo1 (logistic Elo per game).

    ``alpha`` is the probability of accepting H1 when H0 holds, ``beta`` that of
    accepting H0 when H1 holds.
    """

    elo0: float
    elo1: float
    alpha: float = attrs.field(default=0.05, validator=_check_probability)
    beta: float = attrs.field(default=0.05, validator=_check_probability)

    def __attrs_post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError("elo0 must be smaller than elo1")
        if self.alpha + self.beta >= 1.0:
            raise ValueError("alpha + beta must be below 1")

    @property
    def lower(self) -> float:
        """Accept H0 at or below ln(beta / (1 - alpha))."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above ln((1 - beta) / alpha)."""
        return math.log((1.0 - self.beta) / self.alpha)

    def decide(self, llr: float) -> SprtStatus:
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return "continue"

    def start(self) -> SprtState:
        return SprtState(self)


@attrs.frozen
class PentanomialEstimate:
    """Elo of the candidate from pentanomial counts, with a 95% normal interval.

    ``score`` is the mean score per game; ``los`` the likelihood of superiority.
    """

    pairs: int
    score: float
    elo: float
    ci95: tuple[float, float]
    los: float


def _pentanomial(value: Sequence[int]) -> Pentanomial:
    if len(value) != 5 or any(
        isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in value
    ):
        raise ValueError(f"counts must be five ints >= 0, got {value!r}")
    a, b, c, d, e = value
    return (a, b, c, d, e)


@attrs.frozen
class SprtState:
    """Pentanomial counts of a running SPRT; ``counts[k]`` pairs scored k / 2.

    Instances are immutable: the ``add_*`` methods return the updated state.
    """

    sprt: Sprt
    counts: Pentanomial = attrs.field(default=(0, 0, 0, 0, 0), converter=_pentanomial)

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add_pair_score(self, score: float) -> SprtState:
        """Record one pair in which the candidate scored ``score`` (0, 0.5, ..., 2)."""
        if score not in PAIR_SCORES:
            raise ValueError(f"pair score must be one of {PAIR_SCORES}, got {score!r}")
        counts = list(self.counts)
        counts[int(score * 2)] += 1
        return attrs.evolve(self, counts=tuple(counts))

    def add_pair(self, first: float, second: float) -> SprtState:
        """Record one pair from the candidate's scores (0, 0.5 or 1) in its two games."""
        for s in (first, second):
            if s not in (0.0, 0.5, 1.0):
                raise ValueError(f"game score must be 0, 0.5 or 1, got {s!r}")
        return self.add_pair_score(first + second)

    def llr(self) -> float:
        return pentanomial_llr(self.counts, self.sprt.elo0, self.sprt.elo1)

    def status(self) -> SprtStatus:
        return self.sprt.decide(self.llr())

    def estimate(self) -> PentanomialEstimate:
        """Mean score per game with the variance of the pair scores (pairs are independent).

        With fewer than two pairs the interval is unbounded and the LOS 0.5.
        """
        n = self.pairs
        mean = sum(c * k / 4.0 for k, c in enumerate(self.counts)) / n if n else 0.5
        if n < 2:  # no spread can be estimated from a single pair
            return PentanomialEstimate(n, mean, score_to_elo(mean), (-math.inf, math.inf), 0.5)
        var = sum(c * (k / 4.0 - mean) ** 2 for k, c in enumerate(self.counts)) / n
        se = math.sqrt(var / n)
        lo, hi = max(0.0, mean - Z95 * se), min(1.0, mean + Z95 * se)
        los = 0.5 if mean == 0.5 else float(mean > 0.5)  # all pairs scored alike
        if se > 0.0:
            los = _phi((mean - 0.5) / se)
        return PentanomialEstimate(
            n, mean, score_to_elo(mean), (score_to_elo(lo), score_to_elo(hi)), los
        )
