"""Matchmaking: placement first, the fair seats to the bots that waited longest, the
other seats to the most uncertain opponents."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from referee.competition.matchmaking import Entrant, choose_table, fair_seats, next_size
from referee.ratings.online import Belief


def entrant(name: str, mu: float = 1500.0, sigma: float = 60.0, games: int = 40,
            idle: int = 0) -> Entrant:
    return Entrant(name, Belief(mu, sigma, games), games, idle)


class Season:
    """A ladder's bookkeeping around ``choose_table``: games, and the tables since each
    bot last sat at one."""

    def __init__(self, ratings: dict[str, tuple[float, float]], placement: int = 0) -> None:
        self.ratings = ratings
        self.placement = placement
        self.games: Counter[str] = Counter({n: 0 for n in ratings})
        self.last = dict.fromkeys(ratings, 0)
        self.tables: list[tuple[str, ...]] = []

    def play(self, size: int, rng: random.Random) -> tuple[str, ...]:
        field = [Entrant(n, Belief(mu, sigma, self.games[n]), self.games[n],
                         len(self.tables) - self.last[n])
                 for n, (mu, sigma) in self.ratings.items()]
        table = choose_table(field, size, rng, placement_games=self.placement)
        assert table is not None and len(set(table)) == size
        self.tables.append(table)
        for name in table:
            self.games[name] += 1
            self.last[name] = len(self.tables)
        return table

    def longest_wait(self, name: str) -> int:
        """The most tables in a row ``name`` did not sit at."""
        seated = [i for i, t in enumerate(self.tables) if name in t]
        marks = [-1, *seated, len(self.tables)]
        return max(b - a - 1 for a, b in itertools.pairwise(marks))


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
    # "focus" waited longest: it is seated; "near" is 20 Elo away, the rest far.
    field = [entrant("focus", 1500.0, idle=5), entrant("near", 1520.0),
             entrant("far-up", 2100.0), entrant("far-down", 900.0), entrant("mid", 1700.0)]
    opponents = Counter(choose_table(field, 2, random.Random(s), placement_games=0)[1]  # type: ignore[index]
                        for s in range(300))
    assert opponents["near"] > 250
    assert opponents["far-up"] + opponents["far-down"] < 10


def test_a_table_is_found_when_every_order_is_certain() -> None:
    field = [entrant("focus", 1500.0, sigma=1.0, idle=5), entrant("far", 3000.0, sigma=1.0),
             entrant("farther", 4000.0, sigma=1.0)]
    table = choose_table(field, 3, random.Random(0), placement_games=0)
    assert table is not None and table[0] == "focus" and set(table) == {
        "focus", "far", "farther"}


def test_the_games_of_a_field_of_equals_stay_balanced() -> None:
    season = Season({f"b{i}": (1500.0, 60.0) for i in range(10)}, placement=5)
    rng = random.Random(1)
    for _ in range(400):
        season.play(4, rng)
    # 160 games each on average: the fair seats keep every bot within a few of it.
    assert max(season.games.values()) - min(season.games.values()) <= 24


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


@pytest.mark.parametrize("size", [2, 3, 4])
def test_no_bot_waits_longer_than_its_turn_clones_or_not(size: int) -> None:
    """Two strong bots and four copies of one program: the copies stay a coin flip for
    the ratings however many games they play, so they are always the most uncertain
    tables. Every bot still sits at a table at least once every ``ceil(6 / fair
    seats)`` tables, so in any stretch of play it has at least half its fair share."""
    ratings = {"strong": (2300.0, 40.0), "second": (1900.0, 40.0)}
    ratings.update({f"clone{i}": (1500.0, 40.0) for i in range(4)})
    season = Season(ratings)
    rng = random.Random(size)
    for _ in range(600):
        season.play(size, rng)
    turn = -(-len(ratings) // fair_seats(size))
    for name in ratings:
        assert season.longest_wait(name) < turn, (name, season.longest_wait(name))
    for start in range(0, 600, 60):  # every stretch of 60 tables
        seated = Counter(b for t in season.tables[start:start + 60] for b in t)
        fair = 60 * size / len(ratings)
        assert min(seated[n] for n in ratings) >= fair / 2, seated


def test_the_copies_of_one_program_do_not_take_the_informative_seats_forever() -> None:
    """A pair that stays a coin flip after many games has little left to learn: once
    the copies are sure of (small spread), a bot the ratings barely know is drawn."""
    seated = entrant("a", 1500.0, sigma=5.0, idle=9)
    copy = entrant("a-copy", 1500.0, sigma=5.0)
    new = entrant("unknown", 1900.0, sigma=300.0)
    drawn = Counter(choose_table([seated, copy, new], 2, random.Random(s),
                                 placement_games=0)[1]  # type: ignore[index]
                    for s in range(300))
    assert drawn["unknown"] > drawn["a-copy"]


def test_the_opponent_is_drawn_with_its_weight_among_the_whole_field() -> None:
    """Only the bots near a seated one are weighed; the draw is still every bot's weight
    over the whole field's (the far ones have exactly the least weight)."""
    from referee.competition import matchmaking
    from referee.ratings import misorder

    rng = random.Random(7)
    focus = entrant("focus", 1500.0, sigma=40.0, idle=9)
    others = [entrant(f"b{i}", rng.uniform(1350.0, 1650.0), rng.choice([20.0, 40.0, 300.0]))
              for i in range(40)]
    initial = matchmaking.INITIAL_SIGMA * 2 ** 0.5

    def weight(e: Entrant) -> float:
        left = min(1.0, (e.belief.sigma ** 2 + 40.0 ** 2) ** 0.5 / initial)
        term = misorder(e.belief, focus.belief) * left ** 0.5
        return float(max(matchmaking.FLOOR, term) ** matchmaking.SHARPNESS)

    total = sum(weight(e) for e in others)
    draws = 4000
    seen = Counter(choose_table([focus, *others], 2, random.Random(s), placement_games=0)[1]  # type: ignore[index]
                   for s in range(draws))
    distance = sum(abs(seen[e.name] / draws - weight(e) / total) for e in others) / 2
    assert distance < 0.05


def test_the_far_bots_keep_their_least_weight_all_together() -> None:
    """Bots too far to be weighed one by one are still drawn, with the least weight
    each: 500 of them against one close pair that the ratings know well."""
    from referee.competition import matchmaking

    focus = entrant("focus", 1500.0, sigma=1.0, idle=9)
    close = entrant("close", 1500.0, sigma=1.0)
    far = [entrant(f"far{i}", 3000.0 + i, sigma=1.0) for i in range(500)]
    left = (2 ** 0.5) / (2 ** 0.5 * matchmaking.INITIAL_SIGMA)
    close_weight = (0.5 * left ** 0.5) ** matchmaking.SHARPNESS
    far_weight = 500 * matchmaking.FLOOR ** matchmaking.SHARPNESS
    drawn = Counter(choose_table([focus, close, *far], 2, random.Random(s),
                                 placement_games=0)[1]  # type: ignore[index]
                    for s in range(600))
    share = 1 - drawn["close"] / 600
    assert abs(share - far_weight / (far_weight + close_weight)) < 0.07


@pytest.mark.parametrize("placement", [0, 3])
def test_waits_counted_from_any_mark_choose_the_same_tables(placement: int) -> None:
    """The ladder keeps each bot's entrant until it changes, its wait counted back from
    a fixed mark rather than from the tables chosen so far: the waits of the whole
    field are more by one number, and every table chosen is the same, from the same
    random numbers (the placement bots still first)."""
    shift = 1 << 40  # the ladder's mark
    rng = random.Random(7)
    ratings = {f"b{i}": (rng.gauss(1500, 200), rng.uniform(30, 200)) for i in range(60)}
    plain, shifted = random.Random(3), random.Random(3)
    games = Counter({n: rng.randint(0, 6) for n in ratings})
    last = {n: -rng.randint(0, 5) for n in ratings}
    for chosen in range(300):
        field = [(n, Belief(mu, sigma, games[n]), games[n]) for n, (mu, sigma)
                 in ratings.items()]
        size = 2 + chosen % 3
        first = choose_table([Entrant(n, b, g, chosen - last[n]) for n, b, g in field],
                             size, plain, placement_games=placement)
        second = choose_table([Entrant(n, b, g, shift - last[n]) for n, b, g in field],
                              size, shifted, placement_games=placement)
        assert first == second and first is not None
        for name in first:
            games[name] += 1
            last[name] = chosen + 1
