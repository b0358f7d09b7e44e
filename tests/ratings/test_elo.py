"""Tests for referee.ratings.elo: Bradley-Terry Elo, bootstrap, LOS, crosstable, SPRT."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.ratings.elo import (
    ELO_PER_NAT,
    RatedGame,
    elo_to_score,
    fit_elo,
    likelihood_of_superiority,
    score_to_elo,
)
from referee.ratings.leaderboard import PairRecord, rate

ELO_75 = 400.0 * math.log10(3.0)  # 190.848...


def heads_up(
    winner: str, loser: str, n: int = 1, block: str | int | None = None
) -> list[RatedGame]:
    return [RatedGame({winner: 1, loser: 2}, block=block) for _ in range(n)]


def draws(a: str, b: str, n: int = 1) -> list[RatedGame]:
    return [RatedGame({a: 1, b: 1}) for _ in range(n)]


def sample_order(rng: random.Random, players: Sequence[str], elo: dict[str, float]) -> list[str]:
    """Plackett-Luce draw: the next place goes to a player with probability proportional to
    10^(elo/400); for two players this is the logistic Elo model."""
    left = list(players)
    order = []
    while left:
        weights = [10.0 ** (elo[p] / 400.0) for p in left]
        pick = rng.choices(left, weights=weights)[0]
        order.append(pick)
        left.remove(pick)
    return order


def simulated_league(elo: dict[str, float], blocks: int, seats: int, seed: int) -> list[RatedGame]:
    """Duplicate blocks of ``seats`` games each, on ``seats`` players drawn per block."""
    rng = random.Random(seed)
    names = sorted(elo)
    games = []
    for b in range(blocks):
        players = rng.sample(names, seats)
        for _ in range(seats):
            order = sample_order(rng, players, elo)
            games.append(RatedGame({p: k + 1 for k, p in enumerate(order)}, block=b))
    return games


def centred(ratings: dict[str, float]) -> dict[str, float]:
    mean = sum(ratings.values()) / len(ratings)
    return {k: v - mean for k, v in ratings.items()}


# ---------------------------------------------------------------------------
# Elo scale
# ---------------------------------------------------------------------------


def test_elo_score_round_trip() -> None:
    assert elo_to_score(0.0) == 0.5
    assert elo_to_score(ELO_75) == pytest.approx(0.75)
    assert score_to_elo(0.75) == pytest.approx(ELO_75)
    assert score_to_elo(0.0) == -math.inf
    assert score_to_elo(1.0) == math.inf
    assert elo_to_score(-1e6) == 0.0
    assert elo_to_score(1e6) == 1.0
    for elo in (-700.0, -12.5, 3.0, 400.0):
        assert score_to_elo(elo_to_score(elo)) == pytest.approx(elo)


# ---------------------------------------------------------------------------
# Bradley-Terry fit
# ---------------------------------------------------------------------------


def test_two_bots_75_percent_is_191_elo() -> None:
    games = heads_up("A", "B", 300) + heads_up("B", "A", 100)
    elo = fit_elo(games, prior=0.0)
    assert elo["A"] - elo["B"] == pytest.approx(ELO_75, abs=1e-6)
    assert (elo["A"] + elo["B"]) / 2 == pytest.approx(1500.0)


def test_prior_shrinks_only_slightly_with_many_games() -> None:
    games = heads_up("A", "B", 300) + heads_up("B", "A", 100)
    diff = fit_elo(games)["A"] - fit_elo(games)["B"]
    assert ELO_75 - 2.0 < diff < ELO_75


def test_symmetric_results_give_equal_ratings() -> None:
    games = heads_up("A", "B", 40) + heads_up("B", "A", 40)
    for prior in (0.0, 1.0):
        elo = fit_elo(games, prior=prior)
        assert elo["A"] == pytest.approx(1500.0)
        assert elo["B"] == pytest.approx(1500.0)


def test_ties_count_half() -> None:
    # 100 wins and 100 draws out of 200: a 75% score.
    games = heads_up("A", "B", 100) + draws("A", "B", 100)
    elo = fit_elo(games, prior=0.0)
    assert elo["A"] - elo["B"] == pytest.approx(ELO_75, abs=1e-6)
    # Only draws: equal strength, and the MLE exists without a prior.
    elo = fit_elo(draws("A", "B", 7), prior=0.0)
    assert elo["A"] == pytest.approx(elo["B"])


def test_three_bots_consistent_data_recovered_exactly() -> None:
    # A:B = 3:1, B:C = 3:1, A:C = 9:1 is exactly a Bradley-Terry model with
    # strengths 9 : 3 : 1, so the MLE reproduces it.
    games = (
        heads_up("A", "B", 30)
        + heads_up("B", "A", 10)
        + heads_up("B", "C", 30)
        + heads_up("C", "B", 10)
        + heads_up("A", "C", 36)
        + heads_up("C", "A", 4)
    )
    elo = fit_elo(games, prior=0.0)
    assert elo["A"] - elo["B"] == pytest.approx(ELO_75, abs=1e-6)
    assert elo["B"] - elo["C"] == pytest.approx(ELO_75, abs=1e-6)
    assert elo["B"] == pytest.approx(1500.0)


def test_fit_solves_the_likelihood_equations() -> None:
    # At the MLE every bot's expected points equal its actual points.
    games = simulated_league({"a": 0.0, "b": 60.0, "c": 150.0, "d": -80.0}, 60, 3, seed=5)
    elo = fit_elo(games, prior=0.0)
    report = rate(games, resamples=0)
    for a, row in report.crosstable.items():
        expected = sum(rec.games * elo_to_score(elo[a] - elo[b]) for b, rec in row.items())
        actual = sum(rec.points for rec in row.values())
        assert expected == pytest.approx(actual, abs=1e-6)


def test_anchoring() -> None:
    games = heads_up("A", "B", 300) + heads_up("B", "A", 100)
    elo = fit_elo(games, anchor="B", anchor_elo=1000.0, prior=0.0)
    assert elo["B"] == 1000.0
    assert elo["A"] == pytest.approx(1000.0 + ELO_75, abs=1e-6)
    elo = fit_elo(games, anchor_elo=2000.0, prior=0.0)
    assert (elo["A"] + elo["B"]) / 2 == pytest.approx(2000.0)
    report = rate(games, anchor="A", anchor_elo=0.0, resamples=20)
    assert report.bot("A").elo == 0.0
    assert report.bot("A").ci95 == (0.0, 0.0)
    assert report.anchor == "A"
    with pytest.raises(ValueError, match="anchor"):
        fit_elo(games, anchor="nobody")


def test_fit_does_not_depend_on_game_order() -> None:
    games = simulated_league({"a": 0.0, "b": 100.0, "c": 200.0, "d": 300.0}, 50, 4, seed=1)
    shuffled = list(games)
    random.Random(2).shuffle(shuffled)
    one, two = fit_elo(games), fit_elo(shuffled)
    for name in one:
        assert one[name] == pytest.approx(two[name], abs=1e-7)


def test_multiplayer_game_decomposes_into_pairs() -> None:
    multi = [RatedGame({"A": 1, "B": 2, "C": 3}), RatedGame({"C": 1, "A": 2, "B": 3})]
    pairs = heads_up("A", "B") + heads_up("A", "C") + heads_up("B", "C")
    pairs += heads_up("C", "A") + heads_up("C", "B") + heads_up("A", "B")
    assert fit_elo(multi) == pytest.approx(fit_elo(pairs))
    table = rate(multi, resamples=0).crosstable
    assert table["A"]["B"] == PairRecord(wins=2, draws=0, losses=0)
    assert table["A"]["C"] == PairRecord(wins=1, draws=0, losses=1)
    assert table["B"]["C"] == PairRecord(wins=1, draws=0, losses=1)


def test_shared_place_is_a_draw_between_the_tied_bots() -> None:
    report = rate([RatedGame({"A": 1, "B": 1, "C": 3})], resamples=0)
    assert report.crosstable["A"]["B"] == PairRecord(wins=0, draws=1, losses=0)
    assert report.crosstable["C"]["A"] == PairRecord(wins=0, draws=0, losses=1)
    assert report.bot("A").elo == pytest.approx(report.bot("B").elo)
    assert report.bot("A").score == 0.75  # 1.5 points out of 2 pairwise games


def test_crosstable_score_games_and_los() -> None:
    games = heads_up("A", "B", 6) + heads_up("B", "A", 2) + draws("A", "B", 2)
    games += [*heads_up("A", "C", 3), RatedGame({"A": 1, "B": 2, "C": 2})]
    report = rate(games, resamples=0)
    ab = report.crosstable["A"]["B"]
    assert (ab.wins, ab.draws, ab.losses, ab.games) == (7, 2, 2, 11)
    assert ab.points == 8.0
    assert ab.score == pytest.approx(8 / 11)
    assert report.crosstable["B"]["A"] == PairRecord(wins=2, draws=2, losses=7)
    assert report.crosstable["B"]["C"] == PairRecord(wins=0, draws=1, losses=0)
    assert report.bot("A").games == 14
    assert report.bot("B").games == 11
    assert report.bot("C").games == 4
    # A: 8 points vs B out of 11, 4 vs C out of 4.
    assert report.bot("A").score == pytest.approx(12 / 15)
    assert report.los["A"]["B"] == pytest.approx(likelihood_of_superiority(7, 2))
    assert report.los["A"]["B"] + report.los["B"]["A"] == pytest.approx(1.0)
    assert report.los["B"]["C"] == 0.5  # a draw only
    assert set(report.los["A"]) == {"B", "C"}
    assert report.names == ("A", "B", "C")


def test_likelihood_of_superiority_formula() -> None:
    assert likelihood_of_superiority(0, 0) == 0.5
    assert likelihood_of_superiority(5, 5) == 0.5
    # (W - L) / sqrt(W + L) = 1.96 -> 97.5%
    assert likelihood_of_superiority(59.8, 40.2) == pytest.approx(0.975, abs=1e-4)
    assert likelihood_of_superiority(30, 10) == pytest.approx(
        0.5 * (1 + math.erf((20 / math.sqrt(40)) / math.sqrt(2)))
    )


def test_all_wins_bot_stays_finite() -> None:
    games = heads_up("king", "a", 50) + heads_up("king", "b", 50)
    games += heads_up("a", "b", 30) + heads_up("b", "a", 20)
    report = rate(games, resamples=30)
    king = report.bot("king")
    assert report.names[0] == "king"
    assert math.isfinite(king.elo)
    assert king.ci95 is not None and all(math.isfinite(x) for x in king.ci95)
    assert king.score == 1.0
    with pytest.raises(ValueError, match="finite"):
        fit_elo(games, prior=0.0)


def test_all_losses_and_disconnected_groups_stay_finite() -> None:
    games = heads_up("a", "doormat", 20) + heads_up("x", "y", 5) + heads_up("y", "x", 5)
    elo = fit_elo(games)
    assert all(math.isfinite(v) for v in elo.values())
    assert min(elo, key=elo.__getitem__) == "doormat"
    assert sum(elo.values()) / len(elo) == pytest.approx(1500.0)


def test_strong_bot_against_weak_ones_heads_up() -> None:
    truth = {"strong": 400.0, "w1": 0.0, "w2": 50.0, "w3": 100.0}
    rng = random.Random(11)
    games = []
    for b in range(600):
        weak = rng.choice(["w1", "w2", "w3"])
        for _ in range(2):  # a duplicate pair
            order = sample_order(rng, ["strong", weak], truth)
            games.append(RatedGame({order[0]: 1, order[1]: 2}, block=b))
    report = rate(games, resamples=100, seed=3)
    assert report.names[0] == "strong"
    true = centred(truth)  # on the report's scale the mean is 1500
    est = centred({b.name: b.elo for b in report.bots})
    assert est["strong"] == pytest.approx(true["strong"], abs=60)
    ci = report.bot("strong").ci95
    assert ci is not None
    assert ci[0] - 10 < 1500.0 + true["strong"] < ci[1] + 10


def test_simulated_multiplayer_league_ordering() -> None:
    truth = {f"bot{i}": 120.0 * i for i in range(6)}
    games = simulated_league(truth, blocks=300, seats=4, seed=7)
    report = rate(games, resamples=50, seed=1)
    assert report.names == tuple(sorted(truth, key=truth.__getitem__, reverse=True))
    est = centred({b.name: b.elo for b in report.bots})
    for name, value in centred(truth).items():
        assert est[name] == pytest.approx(value, abs=60)


@settings(max_examples=examples(60), deadline=None)
@given(
    n_bots=st.integers(2, 5),
    per_pair=st.integers(1, 6),
    data=st.data(),
)
def test_balanced_round_robin_orders_by_score(
    n_bots: int, per_pair: int, data: st.DataObject
) -> None:
    # When every pair plays equally often, Bradley-Terry ratings follow the scores.
    names = [f"b{i}" for i in range(n_bots)]
    games = []
    for i in range(n_bots):
        for j in range(i + 1, n_bots):
            for _ in range(per_pair):
                outcome = data.draw(st.sampled_from([(1, 2), (1, 1), (2, 1)]))
                games.append(RatedGame({names[i]: outcome[0], names[j]: outcome[1]}))
    report = rate(games, resamples=0)
    bots = list(report.bots)
    assert sum(b.elo for b in bots) / n_bots == pytest.approx(1500.0)
    for a in bots:
        assert math.isfinite(a.elo)
        for b in bots:
            if a.score > b.score + 1e-9:
                assert a.elo > b.elo
            elif abs(a.score - b.score) < 1e-9:
                assert a.elo == pytest.approx(b.elo, abs=1e-6)


# ---------------------------------------------------------------------------
# Bootstrap
# ---------------------------------------------------------------------------


def test_bootstrap_interval_contains_estimate_and_narrows() -> None:
    truth = {"a": 0.0, "b": 100.0, "c": 200.0}
    small = rate(simulated_league(truth, 40, 3, seed=3), resamples=200, seed=0)
    large = rate(simulated_league(truth, 400, 3, seed=4), resamples=200, seed=0)
    assert small.resamples == large.resamples == 200
    for name in truth:
        for report in (small, large):
            bot = report.bot(name)
            assert bot.ci95 is not None
            assert bot.ci95[0] <= bot.elo <= bot.ci95[1]
        s_ci, l_ci = small.bot(name).ci95, large.bot(name).ci95
        assert s_ci is not None and l_ci is not None
        # Ten times the games: about sqrt(10) narrower.
        assert (l_ci[1] - l_ci[0]) < 0.5 * (s_ci[1] - s_ci[0])


def test_bootstrap_is_seeded() -> None:
    games = simulated_league({"a": 0.0, "b": 100.0, "c": 150.0}, 30, 3, seed=9)
    assert rate(games, seed=4, resamples=50) == rate(games, seed=4, resamples=50)
    assert rate(games, seed=4, resamples=50) != rate(games, seed=5, resamples=50)


def test_bootstrap_resamples_whole_blocks() -> None:
    # Each deal decides all four of its games: blocks carry one game's worth of
    # information, so block resampling must give a wider interval than
    # treating the 400 games as independent.
    rng = random.Random(0)
    blocked, loose = [], []
    for b in range(100):
        winner, loser = ("A", "B") if rng.random() < 0.6 else ("B", "A")
        blocked += heads_up(winner, loser, 4, block=b)
        loose += heads_up(winner, loser, 4)
    wide = rate(blocked, resamples=200).bot("A").ci95
    narrow = rate(loose, resamples=200).bot("A").ci95
    assert wide is not None and narrow is not None
    assert rate(blocked, resamples=0).bot("A").elo == rate(loose, resamples=0).bot("A").elo
    assert (wide[1] - wide[0]) > 1.5 * (narrow[1] - narrow[0])


def test_no_bootstrap_and_no_games() -> None:
    report = rate(heads_up("A", "B", 3) + heads_up("B", "A"), resamples=0)
    assert report.resamples == 0
    assert all(b.ci95 is None for b in report.bots)
    empty = rate([])
    assert empty.bots == () and empty.resamples == 0
    assert dict(empty.los) == {} and dict(empty.crosstable) == {}
    assert fit_elo([]) == {}
    with pytest.raises(ValueError):
        rate([], resamples=-1)
    with pytest.raises(ValueError):
        rate([], prior=-1.0)


def test_prior_zero_bootstrap_drops_resamples_without_a_finite_fit() -> None:
    # B's single win is missing from many resamples; those have no finite MLE.
    games = heads_up("A", "B", 5) + heads_up("B", "A", 1)
    report = rate(games, resamples=100, prior=0.0, seed=2)
    assert 0 < report.resamples < 100
    ci = report.bot("A").ci95
    assert ci is not None and all(math.isfinite(x) for x in ci)


def test_bootstrap_of_a_ten_bot_league_uses_every_resample() -> None:
    # Its speed is measured by benchmarks/ratings.py, not here.
    truth = {f"bot{i}": 50.0 * i for i in range(10)}
    games = simulated_league(truth, blocks=250, seats=4, seed=0)
    assert len(games) == 1000
    report = rate(games, resamples=200)
    assert report.resamples == 200
    assert [b.name for b in report.bots][:3] == ["bot9", "bot8", "bot7"]


def test_game_result_validation() -> None:
    with pytest.raises(ValueError):
        RatedGame({"A": 1})
    with pytest.raises(ValueError):
        RatedGame({"A": 1, "B": 0})
    with pytest.raises(ValueError):
        RatedGame({"A": 1, "": 2})
    with pytest.raises(ValueError):
        RatedGame({"A": 1, "B": True})
    places = {"A": 1, "B": 2}
    game = RatedGame(places)
    places["A"] = 3
    assert game.places["A"] == 1  # a copy is kept
    assert game == RatedGame({"B": 2, "A": 1})
    hash(game)


def test_elo_per_nat() -> None:
    assert math.isclose(ELO_PER_NAT, 173.7177927613)
