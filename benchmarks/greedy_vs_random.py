"""Win rate of the greedy sample bot against the random sample bot, heads-up.

Games come in duplicate pairs: both games of a pair deal the same cards from the same
seed, with the bots in swapped seats, as ``taki-referee match`` does. By default the
games are played in-process with the rules core, calling the ``choose`` functions of
``sample_bots/greedy_bot.py`` and ``sample_bots/random_bot.py`` directly; with
``--processes`` they are played by the real referee against the bots as subprocesses.

Run from the repository root::

    python benchmarks/greedy_vs_random.py [--games 1000] [--seed 0] [--processes]

A game without a winner (stopped by the action limit) counts as half a win. The 95%
interval is a normal interval over the pairs' mean scores, which respects the pairing.
The last line is ``win_rate=0.XXX``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from referee.core.schedule import derive_seed
from referee.rules import new_game, view

REPO = Path(__file__).resolve().parent.parent
BOTS = REPO / "sample_bots"

Choose = Callable[[dict[str, Any], list[dict[str, Any]]], Any]


def load_bot(path: Path) -> ModuleType:
    """Import a sample bot script as a module, without running its main block."""
    spec = importlib.util.spec_from_file_location(f"sample_bot_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    argv = sys.argv
    sys.argv = [str(path)]  # random_bot.py reads an optional seed from sys.argv at import
    try:
        spec.loader.exec_module(module)
    finally:
        sys.argv = argv
    return module


def as_choice(answer: Any) -> tuple[int, bool]:
    """A bot's answer as (index, last_card), accepting the SDK's answer shapes we use."""
    if isinstance(answer, tuple):
        return int(answer[0]), bool(answer[1])
    return int(answer), False


def play_game(seed: int, seats: tuple[Choose, Choose]) -> int | None:
    """Play one heads-up game in-process; returns the winning seat (None: no winner)."""
    state = new_game(2, seed)
    seen = [0, 0]
    while not state.is_over:
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        request_view = view(state, seat, seen[seat])
        seen[seat] = len(state.events)
        index, last_card = as_choice(seats[seat](request_view, [a.to_wire() for a in legal]))
        state.apply(legal[index], seat, last_card=last_card)
    return state.result().winner


def in_process(pairs: int, seed: int) -> list[tuple[float, float]]:
    """Greedy's scores in each pair of games: (greedy in seat 0, greedy in seat 1)."""
    greedy = load_bot(BOTS / "greedy_bot.py")
    rand = load_bot(BOTS / "random_bot.py")
    # Reseed the random bot's module-level generator for reproducible runs.
    setattr(rand, "rng", random.Random(derive_seed(seed, "random-bot")))  # noqa: B010
    scores = []
    for pair in range(pairs):
        deal = derive_seed(seed, "deal", pair)
        first = play_game(deal, (greedy.choose, rand.choose))
        second = play_game(deal, (rand.choose, greedy.choose))
        scores.append((score_of(first, 0), score_of(second, 1)))
    return scores


def score_of(winner: int | None, greedy_seat: int) -> float:
    if winner is None:
        return 0.5
    return 1.0 if winner == greedy_seat else 0.0


def with_processes(pairs: int, seed: int) -> list[tuple[float, float]]:
    """The same pairs, played by ``taki-referee match`` against the bots' processes."""
    referee = Path(sys.executable).parent / "taki-referee"
    command = [str(referee)] if referee.exists() else [sys.executable, "-m", "referee.cli"]
    with tempfile.TemporaryDirectory() as logs:
        proc = subprocess.run(
            [
                *command, "match",
                "greedy=python sample_bots/greedy_bot.py",
                f"random=python sample_bots/random_bot.py {seed}",
                "--games", str(2 * pairs), "--seed", str(seed), "--json", "--log-dir", logs,
            ],
            cwd=REPO, capture_output=True, text=True, check=False,
        )
    if proc.returncode != 0:
        sys.exit(f"taki-referee match failed (exit {proc.returncode}):\n{proc.stderr}")
    games = json.loads(proc.stdout)["games"]
    forfeits = [p for g in games for p in g["players"] if p["forfeit"] is not None]
    if forfeits:
        print(f"warning: {len(forfeits)} forfeits: {forfeits[:3]}", file=sys.stderr)
    results = []
    for game in games:
        greedy = next(p for p in game["players"] if p["bot"] == "greedy")
        if game["end"] in ("win", "last_standing"):
            results.append(1.0 if greedy["place"] == 1 else 0.0)
        else:
            results.append(0.5)
    # match plays deal k in games 2k and 2k + 1, with the seats rotated.
    return [(results[2 * k], results[2 * k + 1]) for k in range(pairs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games, in pairs (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    parser.add_argument("--processes", action="store_true",
                        help="play through taki-referee and bot processes instead of in-process")
    args = parser.parse_args()
    pairs = max(1, args.games // 2)

    start = time.perf_counter()
    scores = with_processes(pairs, args.seed) if args.processes else in_process(pairs, args.seed)
    elapsed = time.perf_counter() - start

    games = 2 * len(scores)
    total = sum(a + b for a, b in scores)
    draws = sum((a == 0.5) + (b == 0.5) for a, b in scores)
    rate = total / games
    pair_means = [(a + b) / 2 for a, b in scores]
    if len(pair_means) > 1:
        variance = sum((m - rate) ** 2 for m in pair_means) / (len(pair_means) - 1)
        half = 1.96 * math.sqrt(variance / len(pair_means))
    else:
        half = float("nan")
    mode = "bot processes through taki-referee" if args.processes else "in-process"
    print(f"greedy vs random, {games} heads-up games in {len(scores)} duplicate pairs ({mode})")
    print(f"greedy won {total:g} of {games} games ({draws} without a winner, counted as half)")
    print(f"win rate {rate:.3f}, 95% interval [{rate - half:.3f}, {rate + half:.3f}]")
    print(f"{elapsed:.1f} s, {games / elapsed:.0f} games/s")
    print(f"win_rate={rate:.3f}")


if __name__ == "__main__":
    main()
