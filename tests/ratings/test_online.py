"""Ratings updated game by game (Weng-Lin's Bradley-Terry update) and their intervals."""

from __future__ import annotations

import math
import random

import pytest

from referee.ratings.elo import ELO_PER_NAT
from referee.ratings.online import INITIAL_ELO, INITIAL_SIGMA, Belief, OnlineRatings, misorder


def test_a_win_moves_the_winner_up_and_the_loser_down_by_as_much() -> None:
    ratings = OnlineRatings()
    ratings.update({"a": 1, "b": 2})
    a, b = ratings.belief("a"), ratings.belief("b")
    assert a.mu > INITIAL_ELO > b.mu
    assert a.mu - INITIAL_ELO == pytest.approx(INITIAL_ELO - b.mu)
    assert a.sigma < INITIAL_SIGMA and b.sigma < INITIAL_SIGMA
    assert (a.games, b.games) == (1, 1)
    assert ratings.belief("never") == Belief()


def test_a_tie_between_equals_moves_no_mean() -> None:
    ratings = OnlineRatings()
    ratings.update({"a": 1, "b": 1})
    assert ratings.belief("a").mu == pytest.approx(INITIAL_ELO)
    assert ratings.belief("a").sigma < INITIAL_SIGMA


def test_a_ranking_of_four_orders_the_means() -> None:
    ratings = OnlineRatings()
    ratings.update({"d": 4, "b": 2, "a": 1, "c": 3})
    mus = [ratings.belief(n).mu for n in "abcd"]
    assert mus == sorted(mus, reverse=True)
    with pytest.raises(ValueError, match="two players"):
        ratings.update({"a": 1})


def test_the_ratings_find_the_true_strengths() -> None:
    truth = {"a": 300.0, "b": 150.0, "c": 0.0}
    rng = random.Random(3)
    ratings = OnlineRatings()
    for _ in range(3000):
        x, y = rng.sample(sorted(truth), 2)
        p = 1 / (1 + math.exp(-(truth[x] - truth[y]) / ELO_PER_NAT))
        ratings.update({x: 1, y: 2} if rng.random() < p else {x: 2, y: 1})
    mu = {n: ratings.belief(n).mu for n in truth}
    assert mu["a"] > mu["b"] > mu["c"]
    assert mu["a"] - mu["c"] == pytest.approx(300.0, abs=60.0)
    low, high = ratings.belief("b").interval
    assert low < mu["b"] < high and high - low < 100


def test_misorder() -> None:
    assert misorder(Belief(1500, 100), Belief(1500, 100)) == 0.5
    assert misorder(Belief(1500, 10), Belief(2500, 10)) < 1e-9
    assert 0.0 < misorder(Belief(1500, 100), Belief(1600, 100)) < 0.5
    assert misorder(Belief(1500, 0), Belief(1600, 0)) == 0.0
