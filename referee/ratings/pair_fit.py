"""Ratings from pair counts: the Bradley-Terry fit of :mod:`referee.ratings.elo` from each
pair's wins, draws and losses alone, for a season too large to read game by game.

The pairwise model needs nothing of a game but the results of its pairs of seats, so a
store that keeps per-pair counts (a competition's ``season_pairs``) is rated without
reading a game. The fit is the same maximum-likelihood fit as :func:`fit_elo`'s (same
prior, same anchoring), computed with NumPy: a damped Newton step costs one dense solve
of the bots' Hessian, which at a thousand bots is milliseconds rather than minutes.

The bootstrap cannot draw duplicate blocks (the counts do not keep them): each resample
draws every pair's results again from its own counts (a multinomial of its games over
win, draw and loss at the pair's observed shares, the pair's games fixed), and refits
from the point estimate by Newton steps with the point estimate's Hessian
(docs/ratings.md, "Rating from pair counts"). Pure: no I/O; the only randomness is
``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType

import attrs
import numpy as np
import numpy.typing as npt

from referee.ratings.elo import (
    ELO_PER_NAT,
    check_fit_args,
    likelihood_of_superiority,
    mle_exists,
)
from referee.ratings.leaderboard import BotRating, PairRecord, RatingReport

__all__ = ["PairCounts", "PairGames", "pair_elos", "pair_history", "rate_pair_counts"]

_Array = npt.NDArray[np.float64]


@attrs.frozen
class PairCounts:
    """The pairwise results of a league: ``names`` (sorted) with the games each played,
    and for every pair that met (``first[k] < second[k]``, indices into ``names``) the
    wins of the first over the second, their draws and the first's losses."""

    names: tuple[str, ...]
    games: tuple[int, ...]
    first: tuple[int, ...]
    second: tuple[int, ...]
    wins: tuple[int, ...]
    draws: tuple[int, ...]
    losses: tuple[int, ...]


@attrs.frozen
class PairGames:
    """The pairs of seats of a league's games: for each pair (in the order of its
    game's number, ``game``), its bots (``first < second``, indices into ``names``)
    and the first's points against the second (1 a win, 0.5 a draw, 0 a loss)."""

    names: tuple[str, ...]
    game: npt.NDArray[np.int64]
    first: npt.NDArray[np.intp]
    second: npt.NDArray[np.intp]
    points: _Array


@attrs.frozen
class _Problem:
    n: int
    i: npt.NDArray[np.intp]
    j: npt.NDArray[np.intp]
    cnt: _Array
    prior: float

    def free(self) -> slice:
        """The fitted coordinates: all with a prior, else all but bot 0 (pinned at 0)."""
        return slice(0, self.n) if self.prior > 0.0 else slice(1, self.n)

    def objective(self, theta: _Array, pts: _Array) -> float:
        d = theta[self.i] - theta[self.j]
        total = float(np.sum(-pts * np.logaddexp(0.0, -d) - (self.cnt - pts)
                             * np.logaddexp(0.0, d)))
        if self.prior:
            total -= 0.5 * self.prior * float(np.sum(np.logaddexp(0.0, -theta)
                                                     + np.logaddexp(0.0, theta)))
        return total

    def gradient(self, theta: _Array, pts: _Array) -> _Array:
        p = _sigmoid(theta[self.i] - theta[self.j])
        g = pts - self.cnt * p
        grad: _Array = (np.bincount(self.i, g, self.n).astype(np.float64)
                        - np.bincount(self.j, g, self.n))
        if self.prior:
            grad += 0.5 * self.prior - self.prior * _sigmoid(theta)
        return grad

    def hessian(self, theta: _Array) -> _Array:
        """The negated Hessian (positive semi-definite)."""
        p = _sigmoid(theta[self.i] - theta[self.j])
        h = self.cnt * p * (1.0 - p)
        hess = np.zeros((self.n, self.n))
        hess[self.i, self.j] = -h
        hess[self.j, self.i] = -h
        diag: _Array = (np.bincount(self.i, h, self.n).astype(np.float64)
                        + np.bincount(self.j, h, self.n))
        if self.prior:
            q = _sigmoid(theta)
            diag += self.prior * q * (1.0 - q)
        hess[np.arange(self.n), np.arange(self.n)] = diag
        return hess

    def newton(self, theta: _Array, pts: _Array, stop: float = 1e-10) -> _Array:
        """The maximum by damped Newton steps (the iteration of
        :func:`referee.ratings.newton.maximize`, its stopping rules included: the
        last step below ``stop``)."""
        theta = theta.copy()
        free = self.free()
        value = self.objective(theta, pts)
        for _ in range(200):
            grad = self.gradient(theta, pts)[free]
            hess = self.hessian(theta)[free, free]
            try:
                step = np.linalg.solve(hess, grad)
            except np.linalg.LinAlgError:  # singular: gradient ascent
                step = grad / max(float(np.max(np.diag(hess))), 1e-12)
            biggest = float(np.max(np.abs(step)))
            if biggest < 1e-6:
                theta[free] += step
                if biggest < stop:
                    break
                value = self.objective(theta, pts)
                continue
            slope = float(grad @ step)
            t = 1.0
            while True:
                cand = theta.copy()
                cand[free] += t * step
                cand_value = self.objective(cand, pts)
                if cand_value >= value + 1e-4 * t * slope or t < 1e-10:
                    break
                t *= 0.5
            theta, value = cand, cand_value
        return theta

    def refit(self, start: _Array, inverse: _Array, pts: _Array, fitted: _Array) -> _Array:
        """The maximum for resampled points ``pts``, from the point estimate ``start`` of
        the points ``fitted`` (there the gradient is 0 for ``fitted``, so for ``pts`` it is
        that of their difference, without a sigmoid): Newton
        steps with the point estimate's inverse Hessian until a step is below 1e-4 (0.04
        Elo), then full Newton steps if those have not got there after 50."""
        theta = start.copy()
        free = self.free()
        change = pts - fitted
        grad: _Array = (np.bincount(self.i, change, self.n).astype(np.float64)
                        - np.bincount(self.j, change, self.n))
        for _ in range(50):
            step = inverse @ grad[free]
            theta[free] += step
            if float(np.max(np.abs(step))) < 1e-4:
                return theta
            grad = self.gradient(theta, pts)
        return self.newton(theta, pts)


def _sigmoid(x: _Array) -> _Array:
    with np.errstate(over="ignore"):  # exp(-x) = inf: the sigmoid is 0, as it should be
        return 1.0 / (1.0 + np.exp(-x))


def _anchored(theta: _Array, anchor: int | None, anchor_elo: float) -> _Array:
    elos = theta * ELO_PER_NAT
    ref = elos[anchor] if anchor is not None else float(np.mean(elos))
    return elos - ref + anchor_elo


def pair_elos(counts: PairCounts, prior: float = 1.0) -> dict[str, float]:
    """Every bot's Elo (mean 1500) in the fit of ``counts``, without the resamples and
    the pair tables of :func:`rate_pair_counts`: the point estimates alone."""
    n = len(counts.names)
    if not n:
        return {}
    check_fit_args(list(counts.names), None, prior)
    wins, draws, losses = (np.array(c, dtype=np.float64)
                           for c in (counts.wins, counts.draws, counts.losses))
    problem = _Problem(n, np.array(counts.first, dtype=np.intp),
                       np.array(counts.second, dtype=np.intp), wins + draws + losses, prior)
    theta = problem.newton(np.zeros(n), wins + 0.5 * draws)
    return dict(zip(counts.names, _anchored(theta, None, 1500.0).tolist(), strict=True))


def pair_history(pairs: PairGames, cuts: Sequence[int], prior: float = 1.0
                 ) -> dict[str, list[float | None]]:
    """The Elo (mean 1500) of every bot in the fit of each prefix of the games, a
    prefix's games those numbered up to its cut (``cuts`` ascending): what
    :func:`referee.ratings.rate` gives with the Bradley-Terry model and no resamples,
    ``None`` before a bot's first game. Each prefix's fit starts from the last one's."""
    names = pairs.names
    n = len(names)
    history: dict[str, list[float | None]] = {name: [] for name in names}
    key = pairs.first * n + pairs.second
    cnt = np.zeros(n * n)
    pts = np.zeros(n * n)
    theta = np.zeros(n)
    start = 0
    for end in np.searchsorted(pairs.game, np.asarray(cuts), side="right").tolist():
        cnt += np.bincount(key[start:end], minlength=n * n)
        pts += np.bincount(key[start:end], pairs.points[start:end], n * n)
        start = end
        met = np.flatnonzero(cnt)
        i, j = np.divmod(met, n)
        present = np.flatnonzero(np.bincount(i, minlength=n) + np.bincount(j, minlength=n))
        index = np.full(n, -1)
        index[present] = np.arange(len(present))
        problem = _Problem(len(present), index[i], index[j], cnt[met], prior)
        if len(present):
            # A step below 1e-6 near the maximum leaves an error of its square: the
            # one more solve of the 1e-10 rule would not move a point of the chart.
            theta[present] = problem.newton(theta[present], pts[met], stop=1e-6)
            elos = _anchored(theta[present], None, 1500.0)
        seen = dict(zip(present.tolist(), elos.tolist() if len(present) else [], strict=True))
        for k, name in enumerate(names):
            history[name].append(seen.get(k))
    return history


def rate_pair_counts(
    counts: PairCounts,
    *,
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    resamples: int = 200,
    seed: int = 0,
    prior: float = 1.0,
) -> RatingReport:
    """The report :func:`referee.ratings.rate` makes of the same games with the
    Bradley-Terry model (same Elo, games, scores, crosstable and likelihoods of
    superiority), its intervals from ``resamples`` resamples of the pairs' counts."""
    if resamples < 0:
        raise ValueError("resamples must be >= 0")
    names = list(counts.names)
    n = len(names)
    anchor_index = check_fit_args(names, anchor, prior)
    wins = np.array(counts.wins, dtype=np.float64)
    draws = np.array(counts.draws, dtype=np.float64)
    losses = np.array(counts.losses, dtype=np.float64)
    problem = _Problem(n, np.array(counts.first, dtype=np.intp),
                       np.array(counts.second, dtype=np.intp), wins + draws + losses, prior)
    pts = wins + 0.5 * draws
    pairs = list(zip(counts.first, counts.second, strict=True))
    if prior == 0.0 and not mle_exists(n, pairs, pts.tolist(), problem.cnt.tolist()):
        raise ValueError("no finite maximum-likelihood fit without a prior (perfect separation)")
    theta_hat = problem.newton(np.zeros(n), pts) if n else np.zeros(0)
    elos = _anchored(theta_hat, anchor_index, anchor_elo) if n else theta_hat
    samples = _bootstrap(problem, theta_hat, (wins, draws, losses), resamples if n > 1 else 0,
                         seed)
    table = np.sort(np.array([_anchored(s, anchor_index, anchor_elo) for s in samples]),
                    axis=0) if samples else None
    won = np.bincount(problem.i, pts, n) + np.bincount(problem.j, problem.cnt - pts, n)
    played = np.bincount(problem.i, problem.cnt, n) + np.bincount(problem.j, problem.cnt, n)
    bots = []
    for k, name in enumerate(names):
        ci = None if table is None else (_percentile(table[:, k], 0.025),
                                         _percentile(table[:, k], 0.975))
        score = float(won[k] / played[k]) if played[k] else 0.5
        bots.append(BotRating(name, float(elos[k]), ci, counts.games[k], score))
    bots.sort(key=lambda b: (-b.elo, b.name))
    los, crosstable = _pair_tables(counts)
    return RatingReport(bots=tuple(bots), los=MappingProxyType(los),
                        crosstable=MappingProxyType(crosstable), resamples=len(samples),
                        anchor=anchor, anchor_elo=anchor_elo, model="bradley-terry")


def _bootstrap(problem: _Problem, theta_hat: _Array, results: tuple[_Array, _Array, _Array],
               resamples: int, seed: int) -> list[_Array]:
    """The strengths of each resample that has a finite fit."""
    if not resamples:
        return []
    wins, draws, losses = results
    fitted = wins + 0.5 * draws
    cnt = problem.cnt
    free = problem.free()
    inverse: _Array = np.linalg.inv(problem.hessian(theta_hat)[free, free]).astype(np.float64)
    rng = np.random.default_rng(seed)
    p_win = np.divide(wins, cnt, out=np.zeros_like(cnt), where=cnt > 0)
    rest = draws + losses
    p_draw = np.divide(draws, rest, out=np.zeros_like(cnt), where=rest > 0)
    pairs = list(zip(problem.i.tolist(), problem.j.tolist(), strict=True))
    games = cnt.astype(np.int64)
    # Only the pairs that drew may draw again: NumPy's binomial draws no number when
    # its chance or its count is 0, so leaving the others out keeps the stream.
    drawing = np.flatnonzero(p_draw > 0)
    found = []
    for _ in range(resamples):
        w = rng.binomial(games, p_win)
        d = np.zeros(len(w))
        d[drawing] = rng.binomial(games[drawing] - w[drawing], p_draw[drawing])
        pts = w + 0.5 * d
        if problem.prior == 0.0 and not mle_exists(problem.n, pairs, pts.tolist(),
                                                    cnt.tolist()):
            continue
        found.append(problem.refit(theta_hat, inverse, pts, fitted))
    return found


def _percentile(values: _Array, q: float) -> float:
    pos = q * (len(values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(values) - 1)
    return float(values[lo] + (pos - lo) * (values[hi] - values[lo]))


class _LosRow(Mapping[str, float]):
    """One bot's likelihoods of superiority over every other bot, computed when asked
    (a thousand bots' rows would be a million entries, of which a report shows few):
    0.5 against a bot it never met."""

    def __init__(self, name: str, names: tuple[str, ...], known: frozenset[str],
                 met: Mapping[str, PairRecord], chances: dict[tuple[int, int], float]) -> None:
        self._name, self._names, self._known = name, names, known
        self._met, self._chances = met, chances

    def __getitem__(self, other: str) -> float:
        if other == self._name or other not in self._known:
            raise KeyError(other)
        record = self._met.get(other)
        if record is None:
            return 0.5
        key = (record.wins, record.losses)
        chance = self._chances.get(key)
        if chance is None:
            chance = self._chances[key] = likelihood_of_superiority(*key)
        return chance

    def __iter__(self) -> Iterator[str]:
        return (b for b in self._names if b != self._name)

    def __len__(self) -> int:
        return len(self._names) - 1


def _pair_tables(
    counts: PairCounts,
) -> tuple[dict[str, Mapping[str, float]], dict[str, MappingProxyType[str, PairRecord]]]:
    """The likelihood of superiority of every ordered pair (0.5 for pairs that never
    met, as in :func:`referee.ratings.rate`), and the crosstable of the pairs that met."""
    names = counts.names
    # Few pairs differ in their counts: each distinct record is made, and its LOS
    # computed, once.
    records: dict[tuple[int, int, int], PairRecord] = {}
    chances: dict[tuple[int, int], float] = {}
    met: dict[str, dict[str, PairRecord]] = {name: {} for name in names}
    for i, j, w, d, lost in zip(counts.first, counts.second, counts.wins, counts.draws,
                                counts.losses, strict=True):
        if w + d + lost:
            met[names[i]][names[j]] = _record(records, w, d, lost)
            met[names[j]][names[i]] = _record(records, lost, d, w)
    known = frozenset(names)
    los: dict[str, Mapping[str, float]] = {
        a: _LosRow(a, names, known, met[a], chances) for a in names}
    return los, {a: MappingProxyType(row) for a, row in met.items()}


def _record(records: dict[tuple[int, int, int], PairRecord], wins: int, draws: int,
            losses: int) -> PairRecord:
    key = (wins, draws, losses)
    record = records.get(key)
    if record is None:
        record = records[key] = PairRecord(wins, draws, losses)
    return record
