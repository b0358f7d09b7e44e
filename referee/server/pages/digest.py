"""What the pages show of the stored games, kept up to date as games land.

The games are folded into the season's aggregates in the database
(``referee.competition.aggregates``), and a :class:`Digest` holds in memory only what
every page needs of each bot: its rating (the same online ratings as the ladder's, over
the games in stored order), games, score, forfeits by reason and answer-time figures.
Its memory grows with the bots, never with the games: the lists (a bot's games, a game,
the crosstable, a rating's history) are read from the database by its indexes when a
page asks (:class:`referee.server.pages.stored.Stored`).

Folding and reading run in a worker thread (:meth:`Digest.catch_up`); the pages read
the digest under its lock, also in worker threads. At start the digest reads the bots'
rows as they are, and folds only the games stored since the last fold (of any
process): a start takes seconds, whatever the number of games.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from pathlib import Path
from typing import Final

import attrs

from referee.competition import Folded, Season, SeasonError
from referee.core import FaultReason
from referee.ratings import Belief
from referee.server.pages.stored import GameLine, Pairing, SeatLine, Stored, TimeFigures

__all__ = ["BotFacts", "Digest", "GameLine", "Pairing", "SeatLine"]

#: The window of the "per minute" figures, in seconds.
RATE_WINDOW_S: Final = 600.0


@attrs.frozen
class BotFacts:
    """What the pages show of one bot on every list: its row of the season."""

    belief: Belief
    games: int
    points: float
    pairs: int
    forfeits: dict[FaultReason, int]
    figures: TimeFigures

    @property
    def score(self) -> float | None:
        return self.points / self.pairs if self.pairs else None

    def time_figures(self) -> TimeFigures:
        """Decisions, mean, p95 (nearest rank) and max in ms, near misses."""
        return self.figures


class Digest:
    """The stored games as the pages need them (see the module's docstring)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bots: dict[str, BotFacts] = {}
        #: The games folded (the number of the last one).
        self.stored = 0
        #: Per second of this process, the games it folded and their forfeits (games
        #: stored before it started are not counted).
        self.recent: deque[tuple[int, int, int]] = deque()
        #: The database's readers and the season's folder, once the first catch_up
        #: opened them (catch_up is called by one thread at a time).
        self.reader: Stored | None = None
        self.season: Season | None = None
        self._read_up_to = 0
        self._started = False
        #: When this process began counting the games that land (its first fold).
        self.counting_since: float | None = None
        #: Bumped by every change: a page's version.
        self.version = 0

    def catch_up(self, path: Path) -> int:
        """Fold the games stored since the last fold and read the bots they changed
        (blocking); how many games were folded."""
        if self.season is None:
            self.season = Season(path)
        try:
            folded = self.season.fold()
        except SeasonError:  # too busy now: the pages show what was folded, until later
            mark = self.season.mark()
            folded = Folded(0, 0, mark)
        if self.reader is None:
            self.reader = Stored(path)
        changed = self.reader.bot_rows(self._read_up_to)
        with self.lock:
            if self._started and folded.games:
                second = int(time.time())
                if self.recent and self.recent[-1][0] == second:
                    _, games, forfeits = self.recent.pop()
                else:
                    games = forfeits = 0
                self.recent.append((second, games + folded.games, forfeits + folded.forfeits))
            for bot, row in changed.items():
                self.bots[bot] = BotFacts(*row)
            if changed or folded.mark != self.stored:
                self.version += 1
            self._read_up_to = max(self._read_up_to, folded.mark)
            self.stored = max(self.stored, folded.mark)
            self._trim()
        if not self._started:
            self.counting_since = time.time()
        self._started = True
        return folded.games

    def _trim(self) -> None:
        cut = time.time() - RATE_WINDOW_S
        while self.recent and self.recent[0][0] < cut:
            self.recent.popleft()

    def belief(self, bot: str) -> Belief:
        """A bot's online rating (the initial one for a bot never rated)."""
        facts = self.bots.get(bot)
        return Belief() if facts is None else facts.belief

    def per_minute(self) -> tuple[float, float]:
        """Games and forfeits a minute over the last ten minutes, or since this process
        began counting when that is shorter (right after a start, the games of its
        first minutes over those minutes, not over ten; over one minute at least);
        with the lock held."""
        now = time.time()
        cut = now - RATE_WINDOW_S
        games = sum(g for at, g, _ in self.recent if at >= cut)
        forfeits = sum(f for at, _, f in self.recent if at >= cut)
        since = now if self.counting_since is None else self.counting_since
        minutes = max(min(RATE_WINDOW_S, now - since), 60.0) / 60
        return games / minutes, forfeits / minutes

    @property
    def stored_games(self) -> Stored:
        """The database's readers (with the lock held, after the first catch_up)."""
        if self.reader is None:
            raise RuntimeError("the digest has not read the database yet")
        return self.reader
