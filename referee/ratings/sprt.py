"""The sequential probability ratio test on duplicate pairs (pentanomial GSPRT, logistic
Elo), for CI gates: is NEW stronger than OLD by elo1 rather than elo0? Pure."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, TypeAlias

import attrs

from referee.ratings.elo import Z95, elo_to_score, normal_cdf, score_to_elo

__all__ = [
    "EMPTY_CELL_PSEUDO_COUNT", "PAIR_SCORES", "Pentanomial", "PentanomialEstimate", "Sprt",
    "SprtState", "SprtStatus", "pentanomial_llr",
]

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
            los = normal_cdf((mean - 0.5) / se)
        return PentanomialEstimate(
            n, mean, score_to_elo(mean), (score_to_elo(lo), score_to_elo(hi)), los
        )
