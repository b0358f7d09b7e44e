"""How many games the ladder's matchmaking needs to rank a field, against a round robin
and uniform random tables on the same simulated games.

A field of bots of known strength (Elo drawn uniformly from 0 to ``--gap`` times the
number of bots: ``--gap`` Elo between neighbours on average) plays
simulated games: no processes, no rules engine; a game's places are drawn from the
Plackett-Luce model of the true strengths (a heads-up game is the logistic Elo curve).
A table meeting is one deal at every seat rotation, ``size`` games, as in the ladder.
Three ways of choosing tables play the same field, each game's outcome drawn from the
same random stream:

* ``ladder``: ``referee.competition.matchmaking.choose_table`` on the ratings updated
  game by game (``referee.ratings.online``), as ``referee.competition.ladder`` does;
* ``round-robin``: every table of the field once per cycle (each cycle in a random order),
  as a league;
* ``random``: tables drawn uniformly.

Every strategy's ranking is the full fit of ``referee.ratings.leaderboard.rate`` on all
its games (Bradley-Terry heads-up, Plackett-Luce at larger tables), taken at checkpoints
4% of the games apart (at least half as many games as bots). *Accurate* means every bot
is within one place of its true place, at three checkpoints in a row; the figure is the
games played at the first of them. A run that is not accurate within ``--max-games``
counts as ``--max-games`` (marked ``>``).

Then a new bot of random strength joins the field that played: the figure is the games
played from its entry until it is within one place of its true place (at three
checkpoints in a row), and how many of them it played.

Run from the repository root::

    python benchmarks/matchmaking.py [--seeds 21] [--bots 24] [--bots4 16] [--gap 67]

It prints the medians over the seeds for two-player and four-player tables (and the
mean games to rank, which a run that never settles weighs as it costs), and last
``ratio R``: the ladder's median games over the round robin's, the larger of the two
table sizes' ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import itertools
import math
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import attrs
from anchor import checked_out

from referee.competition.matchmaking import Entrant, choose_table
from referee.ratings.elo import ELO_PER_NAT, RatedGame
from referee.ratings.leaderboard import rate
from referee.ratings.models import RatingModel
from referee.ratings.online import OnlineRatings

#: A new bot's placement phase in the simulated ladder (as the ladder's default).
PLACEMENT_GAMES = 10
#: Checkpoints: the next one comes this fraction of the games later (at least a table).
CHECK_STEP = 0.04
#: Checkpoints in a row that must be accurate.
STREAK = 3

Strategy = Callable[[random.Random], tuple[str, ...]]


class Field:
    """The bots, their true strengths, and the games a strategy had them play."""

    def __init__(self, strengths: dict[str, float], size: int, outcomes: random.Random
                 ) -> None:
        self.strengths = dict(strengths)
        self.size = size
        self.outcomes = outcomes
        self.games: list[RatedGame] = []
        self.online = OnlineRatings()
        self.played: dict[str, int] = dict.fromkeys(strengths, 0)
        self.meetings = 0
        #: The meeting after which each bot last sat at a table (or joined).
        self.last: dict[str, int] = dict.fromkeys(strengths, 0)
        #: Each meeting's bots, in order.
        self.tables: list[tuple[str, ...]] = []

    def add(self, name: str, elo: float) -> None:
        self.strengths[name] = elo
        self.played[name] = 0
        self.last[name] = self.meetings

    def entrants(self) -> list[Entrant]:
        return [Entrant(b, self.online.belief(b), self.played[b], self.meetings - self.last[b])
                for b in self.strengths]

    def truth(self) -> dict[str, int]:
        order = sorted(self.strengths, key=lambda b: -self.strengths[b])
        return {bot: place for place, bot in enumerate(order, 1)}

    def play(self, table: Sequence[str]) -> None:
        """One meeting: a game per seat rotation, places drawn by Plackett-Luce."""
        block = f"m{self.meetings}"
        self.meetings += 1
        self.tables.append(tuple(table))
        for bot in table:
            self.last[bot] = self.meetings
        for _ in table:
            left = list(table)
            places: dict[str, int] = {}
            while left:
                weights = [math.exp(self.strengths[b] / ELO_PER_NAT) for b in left]
                pick = self.outcomes.choices(range(len(left)), weights=weights)[0]
                places[left.pop(pick)] = len(places) + 1
            self.games.append(RatedGame(places=places, block=block))
            self.online.update(places)
            for bot in table:
                self.played[bot] += 1

    def fitted(self) -> dict[str, int]:
        model: RatingModel = "bradley-terry" if self.size == 2 else "plackett-luce"
        report = rate(self.games, resamples=0, model=model)
        ranked = list(report.names) + [b for b in self.strengths if b not in report.names]
        return {bot: place for place, bot in enumerate(ranked, 1)}


def ladder(field: Field) -> Strategy:
    def choose(rng: random.Random) -> tuple[str, ...]:
        table = choose_table(field.entrants(), field.size, rng,
                             placement_games=PLACEMENT_GAMES)
        assert table is not None
        return table
    return choose


def round_robin(field: Field, first: Sequence[str] = ()) -> Strategy:
    """Cycles over every table; with ``first``, the tables of those bots come first in
    each cycle (a league that grew: the newcomer's tables are the missing ones)."""
    def cycles() -> Iterator[tuple[str, ...]]:
        while True:
            tables = list(itertools.combinations(sorted(field.strengths), field.size))
            rng.shuffle(tables)
            tables.sort(key=lambda t: not any(b in t for b in first))
            yield from tables
    rng = random.Random(0)
    source = cycles()
    return lambda _rng: next(source)


def uniform(field: Field) -> Strategy:
    return lambda rng: tuple(rng.sample(sorted(field.strengths), field.size))


def until_accurate(field: Field, strategy: Strategy, rng: random.Random, limit: int,
                   bots: Sequence[str] | None = None) -> tuple[int | None, dict[str, int]]:
    """Play until every bot of ``bots`` (all: None) is within one place of the truth at
    STREAK checkpoints in a row; the games played from the start of the call to the
    first of them (None past ``limit`` games), and each bot's games then."""
    start = len(field.games)
    streak: list[tuple[int, dict[str, int]]] = []
    next_check = start
    while len(field.games) - start <= limit:
        field.play(strategy(rng))
        if len(field.games) < next_check:
            continue
        played = len(field.games) - start
        next_check = len(field.games) + max(field.size, len(field.strengths) // 2,
                                            int(CHECK_STEP * played))
        truth, fitted = field.truth(), field.fitted()
        if all(abs(truth[b] - fitted[b]) <= 1 for b in (bots or truth)):
            streak.append((played, dict(field.played)))
            if len(streak) == STREAK:
                return streak[0]
        else:
            streak = []
    return None, dict(field.played)


def strengths(rng: random.Random, bots: int, spread: float) -> dict[str, float]:
    return {f"bot{i:02d}": rng.uniform(0.0, spread) for i in range(bots)}


STRATEGIES: dict[str, Callable[[Field], Strategy]] = {
    "ladder": ladder, "round-robin": round_robin, "random": uniform}


def anchored(commit: str, where: Path) -> Callable[[Field], Strategy]:
    """The ladder's matchmaking as ``commit`` has it (its module, loaded from a checkout
    of the commit at ``where``; it uses this tree's ratings)."""
    spec = importlib.util.spec_from_file_location(
        "anchor_matchmaking", where / "referee" / "competition" / "matchmaking.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    takes_idle = "idle" in attrs.fields_dict(module.Entrant)

    def make(field: Field) -> Strategy:
        def choose(rng: random.Random) -> tuple[str, ...]:
            entrants = [module.Entrant(e.name, e.belief, e.games, *([e.idle] if takes_idle
                                                                    else []))
                        for e in field.entrants()]
            table: tuple[str, ...] | None = module.choose_table(
                entrants, field.size, rng, placement_games=PLACEMENT_GAMES)
            assert table is not None
            return table
        return choose
    return make


def least_share(field: Field, start: int, bots: Sequence[str], hour: int) -> float:
    """The least, over the whole hours of ``hour`` games of the meetings from ``start``
    on and over ``bots``, of a bot's games in the hour over its fair share (the hour's
    seats over the bots; inf when not one hour was played)."""
    per_hour = max(1, hour // field.size)
    least = math.inf
    tables = field.tables[start:]
    for first in range(0, len(tables) - per_hour + 1, per_hour):
        seated = Counter(b for table in tables[first:first + per_hour] for b in table)
        fair = per_hour * field.size / len(bots)
        least = min(least, *(seated[b] / fair for b in bots))
    return least


def season(size: int, truth: dict[str, float], newcomer: float, make: Callable[[Field],
           Strategy], seed: int, hours: int, hour: int) -> float:
    """A ladder of ``truth`` played ``hours`` hours, then as long again with a new bot:
    the least share (:func:`least_share`) of any bot in any hour of either part."""
    field = Field(truth, size, random.Random(3000 + seed))
    choices = random.Random(4000 + seed)
    strategy = make(field)
    while len(field.games) < hours * hour:
        field.play(strategy(choices))
    least = least_share(field, 0, list(field.strengths), hour)
    field.add("new", newcomer)
    start, played = len(field.tables), len(field.games)
    while len(field.games) - played < hours * hour:
        field.play(strategy(choices))
    return min(least, least_share(field, start, list(field.strengths), hour))


def clones(strong: int, copies: int, spread: float) -> dict[str, float]:
    """Two distinct strong bots and ``copies`` copies of one weaker program."""
    field = {f"strong{i}": spread * (1.0 - 0.3 * i) for i in range(strong)}
    field.update({f"clone{i}": spread * 0.3 for i in range(copies)})
    return field


Results = dict[str, tuple[list[float], list[float], list[float], list[float]]]


def run(size: int, bots: int, spread: float, seeds: int, limit: int,
        strategies: dict[str, Callable[[Field], Strategy]], hours: int, hour: int
        ) -> Results:
    """Per strategy: games until accurate, games until the new bot's place, its games,
    and the least share of a season of the same field."""
    results: Results = {name: ([], [], [], []) for name in strategies}
    for seed in range(seeds):
        field_rng = random.Random(seed)
        truth = strengths(field_rng, bots, spread)
        newcomer = field_rng.uniform(0.0, spread)
        for name, make in strategies.items():
            field = Field(truth, size, random.Random(1000 + seed))
            choices = random.Random(2000 + seed)
            games, _ = until_accurate(field, make(field), choices, limit)
            results[name][0].append(limit if games is None else games)
            field.add("new", newcomer)
            strategy = round_robin(field, ["new"]) if name == "round-robin" else make(field)
            joined, played = until_accurate(field, strategy, choices, limit, ["new"])
            results[name][1].append(limit if joined is None else joined)
            results[name][2].append(played["new"])
            results[name][3].append(season(size, truth, newcomer, make, seed, hours, hour))
    return results


def report(size: int, bots: int, results: Results, limit: int) -> float:
    print(f"\n{size}-player tables, {bots} bots")
    print(f"{'':12} {'games to rank':>14} {'(mean)':>8} {'new bot: games':>15}"
          f" {'its games':>10} {'least share':>12}")
    for name, (games, joined, own, shares) in results.items():
        def shown(values: list[float]) -> str:
            median = statistics.median(values)
            return (">" if median >= limit else "") + f"{median:.0f}"
        mean = statistics.mean(games)
        print(f"{name:12} {shown(games):>14} {mean:>8.0f} {shown(joined):>15}"
              f" {statistics.median(own):>10.0f} {min(shares):>12.2f}")
    ratio = statistics.median(results["ladder"][0]) / statistics.median(
        results["round-robin"][0])
    print(f"ratio ({size}-player) {ratio:.2f}")
    return ratio


def report_clones(size: int, spread: float, seeds: int, strategies: dict[str, Callable[
        [Field], Strategy]], hours: int, hour: int) -> float:
    """Two strong bots and four clones: each strategy's least share over the seeds, and
    the share of the games the clones had (the ladder's least share)."""
    field = clones(2, 4, spread)
    print(f"\n{size}-player tables, 2 strong bots and 4 clones, {hours} + {hours} hours of"
          f" {hour} games (a new bot joins after {hours})")
    print(f"{'':12} {'least share':>12}")
    least: dict[str, float] = {}
    for name, make in strategies.items():
        least[name] = min(season(size, field, spread * 0.5, make, seed, hours, hour)
                          for seed in range(seeds))
        print(f"{name:12} {least[name]:>12.2f}")
    return least["ladder"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=21)
    parser.add_argument("--bots", type=int, default=24, help="bots at two-player tables")
    parser.add_argument("--bots4", type=int, default=16, help="bots at four-player tables")
    parser.add_argument("--gap", type=float, default=67.0,
                        help="the mean Elo between neighbours of the true ranking")
    parser.add_argument("--max-games", type=int, default=60000)
    parser.add_argument("--hour", type=int, default=600,
                        help="the games of an hour, for the shares")
    parser.add_argument("--hours", type=int, default=3,
                        help="the hours of a season before and after a new bot joins")
    parser.add_argument("--anchor", help="a commit whose matchmaking plays beside this one")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.seeds} seeds,"
          f" {args.gap:g} Elo between neighbours on average; medians")
    began = time.perf_counter()
    with contextlib.ExitStack() as stack:
        strategies = dict(STRATEGIES)
        if args.anchor:
            where = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "anchor"
            stack.enter_context(checked_out(args.anchor, where))
            strategies[f"ladder@{args.anchor[:7]}"] = anchored(args.anchor, where)
        ratios, shares = [], []
        for size, bots in ((2, args.bots), (4, args.bots4)):
            results = run(size, bots, args.gap * bots, args.seeds, args.max_games,
                          strategies, args.hours, args.hour)
            ratios.append(report(size, bots, results, args.max_games))
            shares.append(min(results["ladder"][3]))
        for size in (2, 4):
            shares.append(report_clones(size, args.gap * 6, args.seeds, strategies,
                                        args.hours, args.hour))
    print(f"\n{time.perf_counter() - began:.0f} s")
    print(f"ratio {max(ratios):.2f}; least share {min(shares):.2f}")


if __name__ == "__main__":
    main()
