"""League schedules: every table, every deal from every seat, stable seeds, lazily."""

from __future__ import annotations

import inspect
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Iterator

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from schedules import round_robin

from referee.core.schedule import (
    ScheduledGame,
    block_games,
    derive_seed,
    league_units,
    rotate,
    total_games,
)


def names(n: int) -> list[str]:
    return [f"bot{i:03d}" for i in range(n)]


def flatten(blocks: Iterable[list[ScheduledGame]]) -> list[ScheduledGame]:
    return [game for block in blocks for game in block]


def blocks(bots: list[str], table_size: int, deals: int, master_seed: int
           ) -> Iterator[list[ScheduledGame]]:
    """The league's schedule (its units of one deal each), block by block."""
    games = (game for unit in league_units(bots, table_size, deals, master_seed, 1)
             for game in unit.games)
    for _, block in itertools.groupby(games, key=lambda game: game.block):
        yield list(block)


def test_the_leagues_blocks_are_the_round_robins() -> None:
    for n, size, deals in ((2, 2, 1), (5, 3, 2), (6, 4, 3)):
        assert list(blocks(names(n), size, deals, 7)) == list(round_robin(names(n), size,
                                                                          deals, 7))


def test_every_combination_of_bots_is_a_table() -> None:
    bots = names(5)
    schedule = list(blocks(bots, 3, 2, master_seed=1))
    tables = Counter(frozenset(block[0].seats) for block in schedule)
    assert set(tables) == {frozenset(t) for t in itertools.combinations(bots, 3)}
    assert set(tables.values()) == {2}  # one block per deal
    assert len(flatten(schedule)) == total_games(5, 3, 2) == math.comb(5, 3) * 2 * 3


def test_every_bot_sits_in_every_seat_of_each_deal_once() -> None:
    for block in blocks(names(6), 4, 3, master_seed=9):
        table = set(block[0].seats)
        assert len(block) == 4
        assert len({g.deal for g in block}) == 1
        assert len({g.seed for g in block}) == 1  # the same cards in every rotation
        assert len({g.block for g in block}) == 1
        assert sorted(g.rotation for g in block) == [0, 1, 2, 3]
        for seat in range(4):
            assert sorted(g.seats[seat] for g in block) == sorted(table)
        for game in block:
            assert set(game.seats) == table


def test_game_ids_are_unique_and_name_their_game() -> None:
    games = flatten(blocks(names(5), 2, 3, master_seed=0))
    ids = [g.game_id for g in games]
    assert len(set(ids)) == len(ids)
    first = games[0]
    assert first.game_id == "bot000,bot001/deal0/rot0"
    assert first.block == "bot000,bot001/deal0"
    assert first.seats == ("bot000", "bot001")
    assert games[1].seats == ("bot001", "bot000")


def test_seeds_are_stable_and_shared_by_every_table() -> None:
    # Pinned values: a change here would silently change every league's deals.
    assert derive_seed(5, "deal", 0) == 866922752407107029
    assert derive_seed(5, "deal", 1) == 8599731029471427598
    assert derive_seed(0, "deal", 0) != derive_seed(1, "deal", 0)
    seeds = {derive_seed(5, "deal", d) for d in range(1000)}
    assert len(seeds) == 1000
    assert all(0 <= s < 2**63 for s in seeds)

    by_deal: dict[int, set[int]] = {}
    for block in blocks(names(4), 2, 5, master_seed=5):
        by_deal.setdefault(block[0].deal, set()).add(block[0].seed)
    assert all(len(s) == 1 for s in by_deal.values())  # same deal, same cards, any table
    assert by_deal[0] == {derive_seed(5, "deal", 0)}
    assert list(blocks(names(4), 2, 5, 5)) == list(blocks(names(4), 2, 5, 5))


def test_schedule_is_lazy() -> None:
    assert inspect.isgenerator(league_units(names(200), 10, 1000, 3, 1))
    schedule = blocks(names(200), 10, 1000, master_seed=3)
    # C(200, 10) * 1000 blocks could never be built in memory: the first block comes
    # from a generator that has not looked at the rest.
    assert total_games(200, 10, 1000) > 10**19
    first = next(schedule)
    assert len(first) == 10
    assert first[0].seats == tuple(names(10))
    second = next(schedule)
    assert second[0].deal == 1 and set(second[0].seats) == set(names(10))


def test_bad_table_size_is_refused() -> None:
    with pytest.raises(ValueError, match="table_size"):
        next(league_units(names(3), 4, 1, 0, 1))
    with pytest.raises(ValueError, match="table_size"):
        next(league_units(names(3), 1, 1, 0, 1))


def test_rotate() -> None:
    assert rotate(("a", "b", "c"), 0) == ("a", "b", "c")
    assert rotate(("a", "b", "c"), 1) == ("b", "c", "a")
    assert rotate(("a", "b", "c"), 2) == ("c", "a", "b")
    assert [g.seats for g in block_games(("a", "b"), 0, 1)] == [("a", "b"), ("b", "a")]


@settings(max_examples=examples(40), deadline=None)
@given(
    n=st.integers(min_value=2, max_value=7),
    size=st.integers(min_value=2, max_value=7),
    deals=st.integers(min_value=1, max_value=3),
    seed=st.integers(min_value=-(2**63), max_value=2**63 - 1),
)
def test_schedule_properties(n: int, size: int, deals: int, seed: int) -> None:
    size = min(size, n)
    games = flatten(blocks(names(n), size, deals, seed))
    assert len(games) == total_games(n, size, deals)
    assert len({g.game_id for g in games}) == len(games)
    # Each bot plays every deal from every seat the same number of times.
    seats = Counter((g.seats[s], g.deal, s) for g in games for s in range(size))
    assert len(set(seats.values())) == 1
    assert seats[("bot000", 0, 0)] == math.comb(n - 1, size - 1)
