"""Time the Elo fit and bootstrap of a synthetic league.

Run from the repository root: ``python -m benchmarks.ratings [--bots 10 --games 1000]``.
"""

from __future__ import annotations

import argparse
import random
import time

from referee.ratings.elo import GameResult
from referee.ratings.leaderboard import rate


def synthetic_league(bots: int, games: int, seats: int, seed: int) -> list[GameResult]:
    """Duplicate blocks of ``seats`` games; places drawn from known strengths (Plackett-Luce)."""
    rng = random.Random(seed)
    strength = {f"bot{i:02d}": 10.0 ** (40.0 * i / 400.0) for i in range(bots)}
    names = sorted(strength)
    result: list[GameResult] = []
    block = 0
    while len(result) < games:
        players = rng.sample(names, seats)
        for _ in range(min(seats, games - len(result))):
            left = list(players)
            places: dict[str, int] = {}
            while left:
                pick = rng.choices(left, weights=[strength[p] for p in left])[0]
                places[pick] = len(places) + 1
                left.remove(pick)
            result.append(GameResult(places, block=block))
        block += 1
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bots", type=int, default=10, help="bots (default 10)")
    parser.add_argument("--games", type=int, default=1000, help="games (default 1000)")
    parser.add_argument("--seats", type=int, default=4, help="players per game (default 4)")
    parser.add_argument("--resamples", type=int, default=200,
                        help="bootstrap resamples (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    args = parser.parse_args()
    if not 2 <= args.seats <= args.bots:
        parser.error(f"--seats must be between 2 and --bots ({args.bots}), got {args.seats}")
    games = synthetic_league(args.bots, args.games, args.seats, args.seed)
    start = time.perf_counter()
    rate(games, resamples=0)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    report = rate(games, resamples=args.resamples, seed=args.seed)
    total = time.perf_counter() - start
    print(
        f"{args.bots} bots, {len(games)} games of {args.seats}: "
        f"fit {fit * 1000:.1f} ms, fit + {report.resamples} resamples {total:.2f} s"
    )


if __name__ == "__main__":
    main()
