"""Decisions per second of the rules engine, against RLCard's UNO as a yardstick.

Plays random-vs-random games in-process, each contestant for the same wall-clock budget
(taken in interleaved slices, so that load from elsewhere hits all of them alike):

* the engine, 2 players and 4 players: every decision is one ``GameState.apply`` (the
  checked call a referee makes) of an action drawn at random from ``legal_actions``;
* RLCard's UNO (2 players, its only size): ``env.run(is_training=False)`` with an
  ``rlcard.agents.RandomAgent`` in each seat; every decision is one action in the
  returned trajectories (cross-checked against the environment's own action record).

The last line is ``ratio=X.XX``: engine decisions/s (2 players) over RLCard's.

Run from the repository root: ``.venv/bin/python benchmarks/engine.py [--seconds 5]``.
RLCard is not a project dependency; the script installs it with pip when it is missing.
"""

from __future__ import annotations

import argparse
import importlib
import random
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from referee.rules import Rules, new_game, view


def engine_game(players: int, seed: int, rules: Rules, views: bool) -> int:
    """One random-vs-random game; returns the number of decisions taken."""
    rng = random.Random(seed)
    game = new_game(players, seed, rules, first_seat=seed % players)
    decisions = 0
    seen = [0] * players  # events each seat has been sent
    while not game.is_over:
        seats = game.to_act()
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        if views:
            view(game, seat, since=seen[seat])
            seen[seat] = len(game.events)
        action = rng.choice(game.legal_actions(seat))
        game.apply(action, seat, last_card=rng.random() < 0.5)
        decisions += 1
    return decisions


def ensure_rlcard() -> Any:
    try:
        return importlib.import_module("rlcard")
    except ImportError:
        print("rlcard is not installed: installing it with pip", flush=True)
        done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "rlcard"])
        if done.returncode != 0:
            sys.exit("could not install rlcard; the comparison needs it")
        importlib.invalidate_caches()
        return importlib.import_module("rlcard")


def rlcard_uno(seed: int) -> Callable[[], int]:
    """A function that plays one RLCard UNO game with random agents and returns the
    number of decisions taken in it."""
    rlcard = ensure_rlcard()
    import numpy as np
    from rlcard.agents import RandomAgent

    np.random.seed(seed)  # RandomAgent draws from numpy's global generator
    env = rlcard.make("uno", config={"seed": seed})
    env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)])

    def one_game() -> int:
        trajectories, _payoffs = env.run(is_training=False)
        # Each player's trajectory alternates states (dicts) and that player's actions
        # (action ids), starting and ending with a state.
        decisions = sum(1 for t in trajectories for step in t if not isinstance(step, dict))
        assert decisions == len(env.action_recorder), "trajectories and action record disagree"
        return decisions

    return one_game


class Meter:
    """Decisions and time of one contestant, summed over its slices."""

    def __init__(self, label: str, play: Callable[[int], int]) -> None:
        self.label = label
        self.play = play
        self.games = self.decisions = 0
        self.elapsed = 0.0
        play(-1)  # warm up

    def run(self, seconds: float) -> None:
        """Play whole games until ``seconds`` have passed."""
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            self.decisions += self.play(self.games)
            self.games += 1
            now = time.perf_counter()
            if now >= deadline:
                self.elapsed += now - start
                return


def report(meter: Meter) -> float:
    rate = meter.decisions / meter.elapsed
    print(
        f"{meter.label:<28} {rate:>11,.0f} decisions/s  ({meter.games:,} games, "
        f"{meter.decisions / meter.games:.1f} decisions/game, {meter.elapsed:.1f} s)",
        flush=True,
    )
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="wall-clock budget of each measurement"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="slices each budget is cut into; the contestants take turns, slice by slice, "
        "so a change in the machine's load hits all of them alike",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--views",
        action="store_true",
        help="also time the engine building the acting seat's view before each decision",
    )
    args = parser.parse_args()
    rules = Rules()
    base = args.seed * 1_000_003

    def engine(players: int, views: bool = False) -> Callable[[int], int]:
        return lambda i: engine_game(players, base + i + 1, rules, views)

    meters = [
        Meter("engine, 2 players", engine(2)),
        Meter("engine, 4 players", engine(4)),
    ]
    if args.views:
        meters.append(Meter("engine, 2 players + views", engine(2, views=True)))
    uno = rlcard_uno(args.seed)
    meters.append(Meter("rlcard uno, 2 players", lambda _i: uno()))
    rounds = max(1, args.rounds)
    print(
        f"python {sys.version.split()[0]}, {args.seconds:g} s per measurement "
        f"in {rounds} interleaved slices",
        flush=True,
    )
    for _ in range(rounds):
        for meter in meters:
            meter.run(args.seconds / rounds)
    rates = [report(meter) for meter in meters]
    print(f"ratio={rates[0] / rates[-1]:.2f}")


if __name__ == "__main__":
    main()
