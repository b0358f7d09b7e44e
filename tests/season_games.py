"""Games stored straight into a results database, and the season's aggregates counted
again from them without the fold's code (what the aggregates' tables must hold)."""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from referee.core import TimeUse
from referee.league import GameRecord, ResultStore
from referee.league.store import SeatRecord
from referee.ratings import OnlineRatings

BOTS = [f"bot{i}@1" for i in range(7)]
REASONS = ["timeout", "crash", "illegal"]


def random_game(rng: random.Random, n: int) -> GameRecord:
    size = rng.choice([2, 2, 3, 4])
    table = rng.sample(BOTS, size)
    places = list(range(1, size + 1))
    rng.shuffle(places)
    if rng.random() < 0.1:  # a tie
        places[1] = places[0]
    seats = []
    for seat, (bot, place) in enumerate(zip(table, places, strict=True)):
        forfeit = rng.choice(REASONS) if rng.random() < 0.05 else None
        times = TimeUse(tuple(rng.choice([0.5, 1.2, 3.0, 40.1, 120.0])
                              for _ in range(rng.randint(0, 6))), rng.randint(0, 1))
        seats.append(SeatRecord(seat, bot, place, 0, forfeit,
                                f"{forfeit} detail\nstderr" if forfeit else None, times))
    return GameRecord(f"{','.join(table)}/deal{n}/rot0", f"{','.join(table)}/deal{n}", n,
                      10 + n % 7, "win", tuple(seats), None)


def store_games(path: Path, count: int, seed: int = 1, first: int = 0) -> None:
    rng = random.Random(seed)
    with ResultStore(path) as store:
        for n in range(first, first + count):
            store.record(random_game(rng, n))


def recompute(path: Path, upto: int | None = None) -> dict[str, Any]:
    """The aggregates counted again from every stored game (up to number ``upto``),
    without the fold's code: what the tables must hold."""
    db = sqlite3.connect(path)
    games = db.execute("SELECT rowid, game_id FROM games ORDER BY rowid").fetchall()
    seats: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for row in db.execute("SELECT s.game_id, s.seat, s.bot, s.place, s.forfeit_reason,"
                          " t.times_ms, t.near_misses FROM seats s JOIN seat_times t"
                          " ON t.game_id = s.game_id AND t.seat = s.seat ORDER BY s.seat"):
        seats[row[0]].append(row[1:])
    db.close()
    ratings = OnlineRatings()
    bots: dict[str, list[Any]] = defaultdict(lambda: [0, 0.0, 0, 0, 0])
    forfeits: Counter[tuple[str, str]] = Counter()
    times: Counter[tuple[str, float]] = Counter()
    pairs: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    bot_games = []
    for number, game_id in games:
        if upto is not None and number > upto:
            break
        table = seats[game_id]
        places = {bot: place for _, bot, place, *_ in table}
        ratings.update(places)
        for seat, bot, place, reason, spent, near in table:
            row = bots[bot]
            row[0] += 1
            row[3] += near
            row[4] = number
            if reason:
                forfeits[(bot, reason)] += 1
            for ms in json.loads(spent):
                times[(bot, ms)] += 1
            for _, other, other_place, *_ in table:
                if other == bot:
                    continue
                row[2] += 1
                result = 0 if place < other_place else 1 if place == other_place else 2
                pairs[(bot, other)][result] += 1
                row[1] += (1.0, 0.5, 0.0)[result]
            bot_games.append((bot, number, seat, len(table), place, reason,
                              ratings.belief(bot).mu))
    beliefs = ratings.beliefs()
    figures = []
    for bot, (games_of, *_rest) in bots.items():
        spent = sorted((ms, n) for (b, ms), n in times.items() if b == bot)
        decisions = sum(n for _, n in spent)
        cumulative = [sum(n for _, n in spent[:i + 1]) for i in range(len(spent))]
        p95 = next((ms for (ms, _), seen in zip(spent, cumulative, strict=True)
                    if seen * 100 >= 95 * decisions), None)
        figures.append((bot, games_of, decisions, sum(ms * n for ms, n in spent),
                        spent[-1][0] if spent else None, p95))
    return {
        "figures": sorted(figures),
        "bots": sorted((bot, g, beliefs[bot].games, beliefs[bot].mu, beliefs[bot].sigma,
                        p, pr, near, last) for bot, (g, p, pr, near, last) in bots.items()),
        "forfeits": sorted((b, r, n) for (b, r), n in forfeits.items()),
        "times": sorted((b, ms, n) for (b, ms), n in times.items()),
        "pairs": sorted((b, o, *v) for (b, o), v in pairs.items()),
        "bot_games": sorted(bot_games),
    }


def stored_aggregates(path: Path) -> dict[str, Any]:
    db = sqlite3.connect(path)
    out = {
        "figures": sorted(db.execute("SELECT bot, games, decisions, total, top, p95"
                                     " FROM season_time_figures")),
        "bots": sorted(db.execute("SELECT bot, games, rated, mu, sigma, points, pairs,"
                                  " near_misses, last_game FROM season_bots")),
        "forfeits": sorted(db.execute("SELECT bot, reason, count FROM season_forfeits")),
        "times": sorted(db.execute("SELECT bot, ms, count FROM season_times")),
        "pairs": sorted(db.execute("SELECT bot, other, wins, draws, losses FROM season_pairs")),
        "bot_games": sorted(db.execute("SELECT bot, game, seat, size, place, forfeit, elo"
                                       " FROM season_bot_games")),
    }
    db.close()
    return out
