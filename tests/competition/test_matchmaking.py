"""Matchmaking: placement first, then the most uncertain tables, balanced games."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from referee.competition.matchmaking import BALANCE, Doubts, Entrant, choose_table, next_size
from referee.ratings.online import Belief, misorder


def entrant(name: str, mu: float = 1500.0, sigma: float = 60.0, games: int = 40) -> Entrant:
    return Entrant(name, Belief(mu, sigma, games), games)


def test_a_new_bot_is_seated_before_any_other() -> None:
    field = [entrant(f"old{i}", 1200.0 + 50 * i) for i in range(8)] + [
        Entrant("new", Belief(), 0)]
    for seed in range(50):
        table = choose_table(field, 2, random.Random(seed), placement_games=10)
        assert table is not None and table[0] == "new"
    # Placement over: the newcomer is one bot among the others.
    placed = [*field[:-1], entrant("new", 1500.0, 60.0, 40)]
    focus = Counter(choose_table(placed, 2, random.Random(s), placement_games=10)[0]  # type: ignore[index]
                    for s in range(200))
    assert focus["new"] < 100


def test_the_newcomer_with_the_fewest_games_comes_first() -> None:
    field = [entrant("a"), entrant("b"), Entrant("n1", Belief(), 6), Entrant("n2", Belief(), 2)]
    assert {choose_table(field, 2, random.Random(s), placement_games=10)[0]  # type: ignore[index]
            for s in range(30)} == {"n2"}


def test_opponents_are_those_the_ratings_may_have_in_the_wrong_order() -> None:
    # "focus" has far fewer games: it is the focus; "near" is 20 Elo away, the rest far.
    field = [entrant("focus", 1500.0, games=5), entrant("near", 1520.0),
             entrant("far-up", 2100.0), entrant("far-down", 900.0), entrant("mid", 1700.0)]
    opponents = Counter(choose_table(field, 2, random.Random(s), placement_games=0)[1]  # type: ignore[index]
                        for s in range(300))
    assert opponents["near"] > 250
    assert opponents["far-up"] + opponents["far-down"] < 10


def test_a_table_is_found_when_every_order_is_certain() -> None:
    field = [entrant("focus", 1500.0, sigma=1.0, games=5), entrant("far", 3000.0, sigma=1.0),
             entrant("farther", 4000.0, sigma=1.0)]
    table = choose_table(field, 3, random.Random(0), placement_games=0)
    assert table is not None and table[0] == "focus" and set(table) == {
        "focus", "far", "farther"}


def test_the_games_of_a_field_of_equals_stay_balanced() -> None:
    names = [f"b{i}" for i in range(10)]
    games = Counter({n: 0 for n in names})
    rng = random.Random(1)
    for _ in range(400):
        field = [entrant(n, games=games[n]) for n in names]
        table = choose_table(field, 4, rng, placement_games=5)
        assert table is not None and len(set(table)) == 4
        games.update(table)
    assert max(games.values()) - min(games.values()) <= 8


def test_a_table_is_never_larger_than_the_field() -> None:
    field = [entrant("a"), entrant("b"), entrant("c")]
    assert choose_table(field, 4, random.Random(0), placement_games=0) is None
    assert sorted(choose_table(field, 3, random.Random(0), placement_games=0) or ()) == [
        "a", "b", "c"]
    with pytest.raises(ValueError, match="at least 2"):
        choose_table(field, 1, random.Random(0), placement_games=0)
    with pytest.raises(ValueError, match="twice"):
        choose_table([*field, entrant("a")], 2, random.Random(0), placement_games=0)


def test_table_sizes_take_turns_among_those_the_field_fills() -> None:
    assert next_size((2, 4), {}, 10) == 2
    assert next_size((2, 4), {2: 1}, 10) == 4
    assert next_size((2, 4), {2: 3, 4: 1}, 10) == 4
    assert next_size((2, 4), {2: 3, 4: 1}, 3) == 2
    assert next_size((2, 4), {}, 1) is None
    assert next_size((4,), {}, 3) is None


def test_two_bots_the_ratings_cannot_tell_apart_do_not_take_every_game() -> None:
    """The same program submitted twice: its two versions stay a coin flip for the
    ratings however many games they play, so their doubt never falls; the others, far
    apart, have little. They still get their share (``BALANCE``)."""
    spread = {"twin": 1500.0, "twin'": 1500.0, "low": 700.0, "high": 2300.0,
              "top": 3100.0}
    games = Counter({n: 0 for n in spread})
    rng = random.Random(3)
    for _ in range(600):
        field = [entrant(n, mu, sigma=40.0, games=games[n]) for n, mu in spread.items()]
        table = choose_table(field, 2, rng, placement_games=4)
        assert table is not None
        games.update(table)
    assert max(games.values()) <= BALANCE * (min(games.values()) + 4), games


def test_doubts_kept_from_table_to_table_are_the_sums_over_the_field() -> None:
    rng = random.Random(4)
    doubts = Doubts()

    def entrant(name: str) -> Entrant:
        return Entrant(name, Belief(rng.gauss(1500, 150), rng.uniform(20, 350)),
                       rng.randint(0, 50))

    field = {f"b{i}": entrant(f"b{i}") for i in range(30)}
    for step in range(40):
        if step % 7 == 3:
            del field[rng.choice(sorted(field))]
        if step % 5 == 1:
            field[f"new{step}"] = entrant(f"new{step}")
        for name in rng.sample(sorted(field), 3):
            field[name] = entrant(name)
        entrants = list(field.values())
        sums = doubts.sync(entrants)
        assert set(sums) == set(field)
        for e in entrants:
            brute = sum(misorder(e.belief, o.belief) for o in entrants if o.name != e.name)
            assert sums[e.name] == pytest.approx(brute, abs=1e-9)
        # The same table as without the kept doubts.
        assert choose_table(entrants, 3, random.Random(step), placement_games=0,
                            doubts=doubts) == choose_table(
            entrants, 3, random.Random(step), placement_games=0)
