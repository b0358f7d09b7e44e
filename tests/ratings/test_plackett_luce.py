"""Tests for referee.ratings.plackett_luce: the Plackett-Luce fit and its intervals."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from referee.ratings.elo import ELO_PER_NAT, RatedGame, fit_elo
from referee.ratings.leaderboard import rate
from referee.ratings.plackett_luce import fit_plackett_luce

TRUE_ELO = {"a": 1700.0, "b": 1600.0, "c": 1550.0, "d": 1500.0, "e": 1450.0, "f": 1400.0,
            "g": 1300.0}


def ranked(rng: random.Random, players: list[str]) -> dict[str, int]:
    """A Plackett-Luce ranking of ``players`` (Gumbel noise on their strengths): places."""
    score = {p: TRUE_ELO[p] / ELO_PER_NAT - math.log(-math.log(rng.random())) for p in players}
    return {p: k + 1 for k, p in enumerate(sorted(players, key=score.__getitem__, reverse=True))}


def league(blocks: int, seats: int, seed: int) -> list[RatedGame]:
    rng = random.Random(seed)
    names = sorted(TRUE_ELO)
    games = []
    for block in range(blocks):
        players = rng.sample(names, seats)
        games.extend(RatedGame(ranked(rng, players), block=block) for _ in range(seats))
    return games


def heads_up_league(seed: int) -> list[RatedGame]:
    """Heads-up games on random pairs, one in ten a draw."""
    rng = random.Random(seed)
    games = []
    for k in range(400):
        a, b = rng.sample(sorted(TRUE_ELO), 2)
        places = {a: 1, b: 1} if rng.random() < 0.1 else ranked(rng, [a, b])
        games.append(RatedGame(places, block=k // 2))
    return games


def test_recovers_known_strengths_from_a_large_league() -> None:
    games = league(blocks=400, seats=4, seed=1)
    for prior in (0.0, 1.0):
        elo = fit_plackett_luce(games, prior=prior)
        assert statistics.fmean(elo.values()) == pytest.approx(1500.0)
        true_mean = statistics.fmean(TRUE_ELO.values())
        for name, true in TRUE_ELO.items():
            assert elo[name] == pytest.approx(true - true_mean + 1500.0, abs=35.0), name
        assert sorted(elo, key=elo.__getitem__, reverse=True) == list(TRUE_ELO)


def test_is_the_bradley_terry_fit_on_heads_up_tables() -> None:
    games = heads_up_league(seed=2)
    for prior in (0.0, 1.0, 5.0):
        pl = fit_plackett_luce(games, prior=prior)
        bt = fit_elo(games, prior=prior)
        assert pl == pytest.approx(bt, abs=1e-6)
    # The same bootstrap draws give the same intervals.
    pl_report = rate(games, resamples=30, seed=3, model="plackett-luce")
    bt_report = rate(games, resamples=30, seed=3, model="bradley-terry")
    for pl_bot, bt_bot in zip(pl_report.bots, bt_report.bots, strict=True):
        assert pl_bot.name == bt_bot.name
        assert pl_bot.elo == pytest.approx(bt_bot.elo, abs=1e-6)
        assert pl_bot.ci95 == pytest.approx(bt_bot.ci95, abs=1e-6)


def test_uses_the_whole_ranking_not_its_pairs() -> None:
    # a beats b and c beats d in four-player games where the pairs tell nothing apart:
    # the two models weigh first and last places differently.
    games = [RatedGame({"a": 1, "b": 2, "c": 3, "d": 4}),
             RatedGame({"c": 1, "d": 2, "a": 3, "b": 4})] * 3
    assert fit_plackett_luce(games) != pytest.approx(fit_elo(games), abs=1.0)


def test_a_tie_is_the_average_of_the_orders_it_allows() -> None:
    # Twice "a and b share first place" weighs as "a before b" once and "b before a" once.
    tie = [RatedGame({"a": 1, "b": 1, "c": 3, "d": 4})] * 2
    orders = [RatedGame({"a": 1, "b": 2, "c": 3, "d": 4}),
              RatedGame({"b": 1, "a": 2, "c": 3, "d": 4})]
    extra = [RatedGame({"d": 1, "c": 2, "b": 3, "a": 4})]
    assert fit_plackett_luce(tie + extra) == pytest.approx(fit_plackett_luce(orders + extra))
    # So is a tie at the bottom, of three of four players.
    bottom = [RatedGame({"a": 1, "b": 2, "c": 2, "d": 2})] * 6
    permutations = [
        RatedGame({"a": 1, **{p: k + 2 for k, p in enumerate(order)}})
        for order in (("b", "c", "d"), ("b", "d", "c"), ("c", "b", "d"), ("c", "d", "b"),
                      ("d", "b", "c"), ("d", "c", "b"))
    ]
    assert fit_plackett_luce(bottom + extra) == pytest.approx(
        fit_plackett_luce(permutations + extra))


def test_tied_bots_share_a_rating() -> None:
    elo = fit_plackett_luce([RatedGame({"a": 1, "b": 1, "c": 1})] * 5)
    assert elo == pytest.approx({"a": 1500.0, "b": 1500.0, "c": 1500.0})
    elo = fit_plackett_luce([RatedGame({"a": 1, "b": 2, "c": 2}),
                             RatedGame({"b": 1, "c": 1, "a": 3})] * 4, prior=0)
    assert elo["b"] == pytest.approx(elo["c"])


def test_a_bot_that_always_wins_or_loses_stays_finite() -> None:
    rng = random.Random(4)
    games = []
    for k in range(60):
        middle = rng.sample(["b", "c", "d"], 3)
        games.append(RatedGame({"top": 1, **{p: i + 2 for i, p in enumerate(middle)},
                                 "bottom": 5}, block=k))
    elo = fit_plackett_luce(games)
    assert all(math.isfinite(e) for e in elo.values())
    assert elo["top"] > max(elo["b"], elo["c"], elo["d"]) > elo["bottom"]
    assert elo["top"] - elo["bottom"] < 2000.0
    # A stronger prior pulls the extremes in.
    strong = fit_plackett_luce(games, prior=10.0)
    assert strong["top"] - strong["bottom"] < elo["top"] - elo["bottom"]
    # Without a prior they have no finite rating.
    with pytest.raises(ValueError, match="perfect separation"):
        fit_plackett_luce(games, prior=0)
    with pytest.raises(ValueError, match="perfect separation"):
        rate(games, prior=0, model="plackett-luce")
    report = rate(games, resamples=20, model="plackett-luce")
    assert report.resamples == 20
    assert report.names[0] == "top" and report.names[-1] == "bottom"


def test_intervals_contain_the_estimate_and_depend_only_on_the_seed() -> None:
    games = league(blocks=60, seats=6, seed=5)
    report = rate(games, resamples=60, seed=6, model="plackett-luce")
    assert report.model == "plackett-luce" and report.resamples == 60
    for bot in report.bots:
        assert bot.ci95 is not None
        low, high = bot.ci95
        assert low <= bot.elo <= high
        assert high - low < 300.0
    assert report == rate(games, resamples=60, seed=6, model="plackett-luce")
    # Dropped resamples without a finite fit: the anchor gets a degenerate interval.
    anchored = rate(games, resamples=20, seed=6, model="plackett-luce", anchor="d",
                    anchor_elo=1000.0, prior=0)
    assert anchored.bot("d").ci95 == (1000.0, 1000.0)
    assert anchored.bot("d").elo == 1000.0
    assert anchored.bot("a").elo - 1000.0 == pytest.approx(
        fit_plackett_luce(games, prior=0)["a"] - fit_plackett_luce(games, prior=0)["d"])


def test_anchor_and_errors() -> None:
    games = league(blocks=10, seats=3, seed=7)
    elo = fit_plackett_luce(games, anchor="g", anchor_elo=1000.0)
    assert elo["g"] == 1000.0
    centred = fit_plackett_luce(games)
    assert elo["a"] - elo["g"] == pytest.approx(centred["a"] - centred["g"])
    assert fit_plackett_luce([]) == {}
    with pytest.raises(ValueError, match="anchor bot 'nobody'"):
        fit_plackett_luce(games, anchor="nobody")
    with pytest.raises(ValueError, match="prior"):
        fit_plackett_luce(games, prior=-1.0)
