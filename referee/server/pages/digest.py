"""What the pages show of the stored games, kept up to date as games land.

A :class:`Digest` reads each stored game once (``ResultStore.games_since``), in the
order the games were stored, and keeps per bot what the pages need: rating (the same
online ratings as the ladder's, over the games in stored order), pairwise score and
crosstable, forfeits by reason, answer times (as counts of each time, so a percentile
stays exact and memory stays bounded by the distinct times), and its games. Reading
and updating run in a worker thread (:meth:`Digest.catch_up`); the pages read it under
its lock, also in worker threads.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Iterable
from typing import Final

import attrs

from referee.core import FaultReason, short_detail
from referee.league import GameRecord, ResultStore
from referee.ratings import OnlineRatings
from referee.rules import EndReason

__all__ = ["BotFacts", "Digest", "GameLine", "Pairing", "SeatLine"]

#: Games read from the database in one go (a large database is read in steps).
BATCH: Final = 2000
#: Points kept of a bot's rating history (thinned to every other point beyond it).
HISTORY_POINTS: Final = 400
#: The window of the "per minute" figures, in seconds.
RATE_WINDOW_S: Final = 600.0


@attrs.frozen
class SeatLine:
    seat: int
    bot: str
    place: int
    forfeit: FaultReason | None
    #: The first line of the forfeit's detail (the rest may hold the bot's stderr).
    reason_line: str


@attrs.frozen
class GameLine:
    """A stored game as the lists show it; ``number`` counts from 1 in stored order."""

    number: int
    game_id: str
    block: str
    actions: int
    end: EndReason | None
    seats: tuple[SeatLine, ...]
    replay: str | None

    @property
    def size(self) -> int:
        return len(self.seats)

    def seat_of(self, bot: str) -> SeatLine | None:
        return next((s for s in self.seats if s.bot == bot), None)


@attrs.define
class Pairing:
    """One bot's results against another, seat by seat of shared games."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.5


@attrs.define
class BotFacts:
    games: list[int] = attrs.field(factory=list)
    points: float = 0.0
    pairs: int = 0
    forfeits: Counter[FaultReason] = attrs.field(factory=Counter)
    times: Counter[float] = attrs.field(factory=Counter)
    near_misses: int = 0
    #: (game number, Elo after it), thinned to at most HISTORY_POINTS.
    history: list[tuple[int, float]] = attrs.field(factory=list)
    #: The time figures, until the next game (sorting the times is the dear part).
    figures: dict[str, float | int | None] | None = None

    @property
    def score(self) -> float | None:
        return self.points / self.pairs if self.pairs else None

    @property
    def decisions(self) -> int:
        return sum(self.times.values())

    def time_figures(self) -> dict[str, float | int | None]:
        """Decisions, mean, p95 (nearest rank) and max in ms, near misses."""
        if self.figures is None:
            self.figures = self._time_figures()
        return self.figures

    def _time_figures(self) -> dict[str, float | int | None]:
        count = self.decisions
        if not count:
            return {"decisions": 0, "mean": None, "p95": None, "max": None,
                    "near_misses": self.near_misses}
        ordered = sorted(self.times.items())
        rank, seen, p95 = math.ceil(0.95 * count), 0, ordered[-1][0]
        for value, times in ordered:
            seen += times
            if seen >= rank:
                p95 = value
                break
        total = sum(value * times for value, times in ordered)
        return {"decisions": count, "mean": round(total / count, 1), "p95": p95,
                "max": ordered[-1][0], "near_misses": self.near_misses}


class Digest:
    """The stored games as the pages need them (see the module's docstring)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.games: list[GameLine] = []
        self.bots: dict[str, BotFacts] = defaultdict(BotFacts)
        self.crosstable: dict[str, dict[str, Pairing]] = defaultdict(
            lambda: defaultdict(Pairing))
        self.ratings = OnlineRatings()
        #: When this process saw each recent game land, with its forfeits (games
        #: stored before it started are not counted).
        self.recent: deque[tuple[float, int]] = deque()
        self._after = 0
        self._started = False
        #: When this process began counting the games that land (its first read).
        self.counting_since: float | None = None
        #: Bumped by every change: a page's version.
        self.version = 0

    def catch_up(self, store: ResultStore) -> int:
        """Read the games stored since the last call (blocking); how many."""
        read = 0
        while True:
            after, games = store.games_since(self._after, BATCH)
            if not games:
                break
            with self.lock:
                self._add(games, counted=self._started)
                self._after = after
                self.version += 1
            read += len(games)
        if not self._started:
            self.counting_since = time.time()
        self._started = True
        return read

    def _add(self, games: Iterable[GameRecord], *, counted: bool) -> None:
        now = time.time()
        for game in games:
            number = len(self.games) + 1
            seats = tuple(sorted(game.seats, key=lambda s: s.seat))
            self.games.append(GameLine(
                number, game.game_id, game.block, game.actions, game.reason,
                tuple(SeatLine(s.seat, s.bot, s.place, s.forfeit_reason,
                               short_detail(s.forfeit_detail or "")) for s in seats),
                game.replay))
            places = {s.bot: s.place for s in seats}
            if len(places) >= 2:
                self.ratings.update(places)
            forfeits = 0
            for seat in seats:
                facts = self.bots[seat.bot]
                facts.games.append(number)
                facts.figures = None
                facts.times.update(seat.time.times_ms)
                facts.near_misses += seat.time.near_misses
                if seat.forfeit_reason is not None:
                    facts.forfeits[seat.forfeit_reason] += 1
                    forfeits += 1
                for other in seats:
                    if other.bot == seat.bot:
                        continue
                    pairing = self.crosstable[seat.bot][other.bot]
                    facts.pairs += 1
                    if seat.place < other.place:
                        pairing.wins += 1
                        facts.points += 1.0
                    elif seat.place == other.place:
                        pairing.draws += 1
                        facts.points += 0.5
                    else:
                        pairing.losses += 1
                if seat.bot in places and len(places) >= 2:
                    history = facts.history
                    history.append((number, self.ratings.belief(seat.bot).mu))
                    if len(history) > HISTORY_POINTS:
                        del history[1:-1:2]
            if counted:
                self.recent.append((now, forfeits))
        cut = now - RATE_WINDOW_S
        while self.recent and self.recent[0][0] < cut:
            self.recent.popleft()

    def per_minute(self) -> tuple[float, float]:
        """Games and forfeits a minute over the last ten minutes, or since this process
        began counting when that is shorter (right after a start, the games of its
        first minutes over those minutes, not over ten); with the lock held."""
        now = time.time()
        cut = now - RATE_WINDOW_S
        recent = [f for at, f in self.recent if at >= cut]
        since = now if self.counting_since is None else self.counting_since
        minutes = max(min(RATE_WINDOW_S, now - since), 60.0) / 60
        return len(recent) / minutes, sum(recent) / minutes
