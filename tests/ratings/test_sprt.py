"""Tests for referee.ratings.sprt: the pentanomial SPRT on duplicate pairs."""


from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.ratings.elo import (
    elo_to_score,
    score_to_elo,
)
from referee.ratings.sprt import Sprt, SprtState, _constrained_mle, pentanomial_llr

ELO_75 = 400.0 * math.log10(3.0)  # 190.848...: a 75% score


def test_sprt_bounds() -> None:
    sprt = Sprt(0.0, 5.0, alpha=0.05, beta=0.05)
    assert sprt.lower == pytest.approx(math.log(0.05 / 0.95))
    assert sprt.upper == pytest.approx(math.log(0.95 / 0.05))
    sprt = Sprt(-10.0, 0.0, alpha=0.1, beta=0.2)
    assert sprt.lower == pytest.approx(math.log(0.2 / 0.9))
    assert sprt.upper == pytest.approx(math.log(0.8 / 0.1))
    assert sprt.decide(sprt.upper) == "H1"
    assert sprt.decide(sprt.lower) == "H0"
    assert sprt.decide(0.0) == "continue"


def test_sprt_config_validation() -> None:
    with pytest.raises(ValueError):
        Sprt(5.0, 0.0)
    with pytest.raises(ValueError):
        Sprt(0.0, 5.0, alpha=0.0)
    with pytest.raises(ValueError):
        Sprt(0.0, 5.0, beta=1.0)
    with pytest.raises(ValueError):
        Sprt(0.0, 5.0, alpha=0.6, beta=0.5)


def test_sprt_state_accumulates_immutably() -> None:
    start = Sprt(0.0, 5.0).start()
    state = start.add_pair(1.0, 0.5).add_pair(0.0, 0.0).add_pair_score(2.0).add_pair(0.5, 0.5)
    assert start.counts == (0, 0, 0, 0, 0)
    assert state.counts == (1, 0, 1, 1, 1)
    assert state.pairs == 4
    with pytest.raises(ValueError):
        start.add_pair(1.0, 0.25)
    with pytest.raises(ValueError):
        start.add_pair_score(2.5)
    with pytest.raises(ValueError):
        start.add_pair_score(0.75)
    with pytest.raises(ValueError):
        start.add_pair_score(math.nan)
    with pytest.raises(ValueError):
        SprtState(Sprt(0.0, 5.0), (1, 2, 3))
    with pytest.raises(ValueError):
        SprtState(Sprt(0.0, 5.0), (1, 2, 3, 4, -1))


def test_constrained_mle_has_the_requested_mean() -> None:
    probs = [0.1, 0.2, 0.4, 0.2, 0.1]
    for score in (0.3, 0.5, 0.52, 0.9):
        q = _constrained_mle(probs, score)
        assert sum(q) == pytest.approx(1.0)
        assert sum(k / 4 * x for k, x in enumerate(q)) == pytest.approx(score, abs=1e-12)
        assert all(x > 0 for x in q)
    assert _constrained_mle(probs, 0.5) == pytest.approx(probs)


def test_llr_sign_and_symmetry() -> None:
    good = (5, 20, 40, 25, 10)
    bad = (10, 25, 40, 20, 5)
    assert pentanomial_llr(good, 0.0, 10.0) > 0
    assert pentanomial_llr(bad, 0.0, 10.0) < 0
    # A symmetric pentanomial sits halfway between elo0 = -e and elo1 = +e.
    assert pentanomial_llr((10, 20, 40, 20, 10), -5.0, 5.0) == pytest.approx(0.0, abs=1e-9)
    # Mirroring the data and the hypotheses flips the sign.
    assert pentanomial_llr(good, 0.0, 10.0) == pytest.approx(-pentanomial_llr(bad, -10.0, 0.0))
    # The LLR grows linearly with the number of pairs at fixed frequencies.
    assert pentanomial_llr([10 * c for c in good], 0.0, 10.0) == pytest.approx(
        10 * pentanomial_llr(good, 0.0, 10.0)
    )


def test_llr_matches_normal_approximation_for_close_hypotheses() -> None:
    counts = (1000, 4000, 6000, 4200, 1100)
    n = sum(counts)
    mean = sum(k / 4 * c for k, c in enumerate(counts)) / n
    var = sum(c * (k / 4 - mean) ** 2 for k, c in enumerate(counts)) / n
    s0, s1 = elo_to_score(0.0), elo_to_score(5.0)
    approx = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert pentanomial_llr(counts, 0.0, 5.0) == pytest.approx(approx, rel=0.01)


def test_degenerate_counts() -> None:
    sprt = Sprt(0.0, 20.0)
    empty = sprt.start()
    assert empty.llr() == 0.0
    assert empty.status() == "continue"
    est = empty.estimate()
    assert (est.pairs, est.elo, est.los) == (0, 0.0, 0.5)
    one = empty.add_pair(1.0, 0.5).estimate()
    assert (one.pairs, one.score, one.ci95, one.los) == (1, 0.75, (-math.inf, math.inf), 0.5)
    assert one.elo == pytest.approx(ELO_75)
    only_draws = SprtState(sprt, (0, 0, 50, 0, 0))
    assert only_draws.llr() < 0
    assert math.isfinite(only_draws.llr())
    assert only_draws.estimate().elo == 0.0
    assert only_draws.estimate().ci95 == (0.0, 0.0)
    assert SprtState(sprt, (0, 0, 5000, 0, 0)).status() == "H0"
    all_wins = SprtState(sprt, (0, 0, 0, 0, 30))
    assert all_wins.llr() > 0
    assert all_wins.estimate().elo == math.inf
    assert all_wins.estimate().los == 1.0
    assert SprtState(sprt, (0, 0, 0, 0, 3000)).status() == "H1"
    all_losses = SprtState(sprt, (30, 0, 0, 0, 0))
    assert all_losses.llr() < 0
    assert all_losses.estimate().elo == -math.inf


def test_pentanomial_estimate_by_hand() -> None:
    est = SprtState(Sprt(0.0, 5.0), (0, 0, 1, 0, 1)).estimate()
    # Pair scores 1 and 2 -> per-game scores 0.5 and 1: mean 0.75, variance 0.0625.
    assert est.score == 0.75
    assert est.elo == pytest.approx(ELO_75)
    se = math.sqrt(0.0625 / 2)
    assert est.ci95[0] == pytest.approx(score_to_elo(0.75 - 1.959963984540054 * se))
    assert est.ci95[1] == math.inf  # the upper end is clamped at a score of 1
    assert est.los == pytest.approx(0.5 * (1 + math.erf(0.25 / se / math.sqrt(2))))


@settings(max_examples=examples(200), deadline=None)
@given(
    counts=st.lists(st.integers(0, 10_000), min_size=5, max_size=5),
    elo0=st.floats(-50, 50),
    width=st.floats(0.5, 50),
)
def test_llr_is_finite_for_any_counts(counts: list[int], elo0: float, width: float) -> None:
    state = SprtState(Sprt(elo0, elo0 + width), counts)
    assert math.isfinite(state.llr())
    assert state.status() in ("H0", "H1", "continue")
    est = state.estimate()
    assert est.ci95[0] <= est.elo <= est.ci95[1]


def run_sprt(sprt: Sprt, probs: Sequence[float], rng: random.Random, max_pairs: int) -> str:
    state = sprt.start()
    for _ in range(max_pairs):
        score = rng.choices((0.0, 0.5, 1.0, 1.5, 2.0), weights=probs)[0]
        state = state.add_pair_score(score)
        status = state.status()
        if status != "continue":
            return status
    return "continue"


def pentanomial_elo(probs: Sequence[float]) -> float:
    return score_to_elo(sum(k / 4 * p for k, p in enumerate(probs)))


def test_simulated_strong_candidate_accepts_h1() -> None:
    strong = (0.03, 0.15, 0.47, 0.25, 0.10)
    assert pentanomial_elo(strong) == pytest.approx(41.9, abs=0.1)
    rng = random.Random(123)
    outcomes = [run_sprt(Sprt(0.0, 10.0), strong, rng, 5000) for _ in range(10)]
    assert outcomes == ["H1"] * 10


def test_simulated_equal_candidate_accepts_h0() -> None:
    # alpha = 0.05 bounds the rate of false H1 decisions; about 1 in 20 runs.
    equal = (0.05, 0.2, 0.5, 0.2, 0.05)
    rng = random.Random(321)
    outcomes = [run_sprt(Sprt(0.0, 20.0), equal, rng, 5000) for _ in range(30)]
    assert outcomes.count("H1") <= 3
    assert outcomes.count("H0") == 30 - outcomes.count("H1")


