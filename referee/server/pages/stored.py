"""The stored games as the pages list them, read from the database by its indexes when a
page asks: a game by its number, a bot's games page by page, its forfeits, the
crosstable's pairs, a rating's history. Nothing is kept between two pages.

A game's number is its row in the table of games (``games.rowid``): the games count
from 1 in the order they were stored. The per-bot lists come from the season's
aggregates (``referee.competition.aggregates``), so a bot with ten thousand games is
listed fifty at a time without reading the others.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from referee.core import FaultReason, short_detail
from referee.league import BUSY_TIMEOUT_MS, Meeting
from referee.ratings import Belief
from referee.rules import EndReason

__all__ = ["GameLine", "Pairing", "SeatLine", "Stored", "TimeFigures", "sql_seconds",
           "time_figures"]

#: Points of a rating's history shown (evenly thinned beyond).
HISTORY_POINTS: Final = 400

TimeFigures = dict[str, float | int | None]


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


def time_figures(decisions: int, total: float, top: float | None, p95: float | None,
                 near_misses: int) -> TimeFigures:
    """A bot's answer-time figures: decisions, mean, p95 (nearest rank) and max in ms,
    near misses."""
    if not decisions:
        return {"decisions": 0, "mean": None, "p95": None, "max": None,
                "near_misses": near_misses}
    return {"decisions": decisions, "mean": round(total / decisions, 1), "p95": p95,
            "max": top, "near_misses": near_misses}


#: What a bot's games list may keep (``GameFilter.result`` of the bot page).
_RESULTS: Final = {"": "", "won": " AND b.place = 1", "lost": " AND b.place <> 1",
                   "forfeit": " AND b.forfeit IS NOT NULL"}


_spent = threading.local()


def sql_seconds() -> float:
    """The seconds the calling thread has spent in the queries of the pages so far
    (waiting for the connection included)."""
    spent: float = getattr(_spent, "seconds", 0.0)
    return spent


class Stored:
    """Read-only queries of the database at ``path``, from any number of threads at once:
    each query takes a connection of its own from a pool (opened when none is idle, so
    there are as many as threads ever read at once: the pages' bounded worker threads),
    and the reads of one page never wait for another page's."""

    def __init__(self, path: Path) -> None:
        self._uri = f"{path.resolve().as_uri()}?mode=ro"
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._opened: list[sqlite3.Connection] = []
        self._opening = threading.Lock()
        self._idle.put(self._open())  # a database that cannot be read fails here

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self._uri, uri=True, isolation_level=None,
                             check_same_thread=False)
        db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
        with self._opening:
            self._opened.append(db)
        return db

    def close(self) -> None:
        with self._opening:
            for db in self._opened:
                db.close()
            self._opened.clear()

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        began = time.perf_counter()
        try:
            db = self._idle.get_nowait()
        except queue.Empty:
            db = self._open()
        try:
            return db.execute(sql, args).fetchall()
        finally:
            self._idle.put(db)
            _spent.seconds = sql_seconds() + time.perf_counter() - began

    def bot_rows(self, after: int) -> dict[str, tuple[Any, ...]]:
        """The bots changed by the games after number ``after``: by bot, the values of
        ``referee.server.pages.digest.BotFacts`` (belief, games, points, pairs,
        forfeits, time figures)."""
        rows = self._all(
            "SELECT b.bot, b.games, b.rated, b.mu, b.sigma, b.points, b.pairs, b.near_misses,"
            " f.decisions, f.total, f.top, f.p95 FROM season_bots b LEFT JOIN"
            " season_time_figures f ON f.bot = b.bot WHERE b.last_game > ?", (after,))
        forfeits: dict[str, dict[FaultReason, int]] = {}
        for bot, reason, n in self._all(
                "SELECT bot, reason, count FROM season_forfeits WHERE bot IN (SELECT bot FROM"
                " season_bots WHERE last_game > ?) ORDER BY bot, reason", (after,)):
            forfeits.setdefault(bot, {})[FaultReason(reason)] = n
        out: dict[str, tuple[Any, ...]] = {}
        for bot, games, rated, mu, sigma, points, pairs, near, n, total, top, p95 in rows:
            belief = Belief(mu, sigma, rated) if rated else Belief()
            out[bot] = (belief, games, points, pairs, forfeits.get(bot, {}),
                        time_figures(n or 0, total or 0.0, top, p95, near))
        return out

    def submissions_mark(self) -> tuple[tuple[Any, ...], ...]:
        """What changes whenever a submission comes or changes its status (a few rows
        of counts, read in SQLite's C: the pages read the submissions themselves again
        only when it changed)."""
        return tuple(tuple(row) for row in self._all(
            "SELECT status, COUNT(*), SUM(id), COUNT(version) FROM submissions"
            " GROUP BY status ORDER BY status"))

    # ------------------------------------------------------------- games

    def games(self, numbers: Sequence[int]) -> list[GameLine]:
        """The games numbered ``numbers`` that exist, in that order."""
        if not numbers:
            return []
        marks = ",".join("?" * len(numbers))
        rows = self._all("SELECT rowid, game_id, block, actions, reason, replay FROM games"
                         f" WHERE rowid IN ({marks})", list(numbers))
        ids = [row[1] for row in rows]
        id_marks = ",".join("?" * len(ids))
        seats: dict[str, list[SeatLine]] = {game_id: [] for game_id in ids}
        for game_id, seat, bot, place, reason, detail in self._all(
                "SELECT game_id, seat, bot, place, forfeit_reason, forfeit_detail FROM seats"
                f" WHERE game_id IN ({id_marks}) ORDER BY game_id, seat", ids):
            seats[game_id].append(SeatLine(seat, bot, place, None if reason is None
                                           else FaultReason(reason),
                                           short_detail(detail or "")))
        lines = {number: GameLine(number, game_id, block, actions,
                                  None if end is None else EndReason(end),
                                  tuple(seats[game_id]), replay)
                 for number, game_id, block, actions, end, replay in rows}
        return [lines[n] for n in numbers if n in lines]

    def game(self, number: int) -> GameLine | None:
        found = self.games([number])
        return found[0] if found else None

    def bot_games(self, bot: str, *, opponent: str = "", size: int = 0, result: str = "",
                  offset: int = 0, limit: int = 50) -> tuple[int, list[GameLine]]:
        """How many of ``bot``'s games the filter keeps, and those of them from
        ``offset`` on (newest first), at most ``limit``."""
        where = "b.bot = ?" + _RESULTS.get(result, "")
        args: list[Any] = [bot]
        if size:
            where += " AND b.size = ?"
            args.append(size)
        if opponent:
            where += (" AND EXISTS (SELECT 1 FROM season_bot_games o WHERE o.bot = ?"
                      " AND o.game = b.game)")
            args.append(opponent)
        kept = int(self._all(f"SELECT COUNT(*) FROM season_bot_games b WHERE {where}",
                             args)[0][0])
        numbers = [row[0] for row in self._all(
            f"SELECT b.game FROM season_bot_games b WHERE {where} ORDER BY b.game DESC"
            " LIMIT ? OFFSET ?", [*args, limit, offset])]
        return kept, self.games(numbers)

    def newest_games(self, bot: str, limit: int) -> list[GameLine]:
        """``bot``'s latest ``limit`` games, newest first (not counted: a bot with ten
        thousand games costs what a bot with twenty does)."""
        return self.games([row[0] for row in self._all(
            "SELECT game FROM season_bot_games WHERE bot = ? ORDER BY game DESC LIMIT ?",
            (bot, limit))])

    def sizes(self, bot: str) -> list[int]:
        """The table sizes of ``bot``'s games."""
        return [row[0] for row in self._all(
            "SELECT DISTINCT size FROM season_bot_games WHERE bot = ? ORDER BY size", (bot,))]

    def opponents(self, bot: str) -> list[str]:
        return [row[0] for row in self._all(
            "SELECT other FROM season_pairs WHERE bot = ? ORDER BY other", (bot,))]

    def forfeit_games(self, bot: str, limit: int = 20) -> list[GameLine]:
        """``bot``'s latest games that it forfeited, newest first."""
        numbers = [row[0] for row in self._all(
            "SELECT game FROM season_bot_games WHERE bot = ? AND forfeit IS NOT NULL"
            " ORDER BY game DESC LIMIT ?", (bot, limit))]
        return self.games(numbers)

    def meetings_of(self, block: str) -> list[Meeting]:
        """The ladder's meetings of the table of a game's ``block`` (``a,b/deal7``)."""
        table = block.partition("/")[0].split(",")
        rows = self._all("SELECT name, bots, first_deal, deals, finished FROM meetings"
                         " WHERE bots = ? ORDER BY rowid", (json.dumps(table),))
        return [Meeting(name, tuple(json.loads(bots)), first, deals, bool(finished))
                for name, bots, first, deals, finished in rows]

    # ------------------------------------------------------------ ratings

    def pairings(self, names: Sequence[str]) -> dict[str, dict[str, Pairing]]:
        """Each of ``names`` against each other: the pairs that met."""
        if not names:
            return {}
        marks = ",".join("?" * len(names))
        out: dict[str, dict[str, Pairing]] = {}
        for bot, other, wins, draws, losses in self._all(
                "SELECT bot, other, wins, draws, losses FROM season_pairs"
                f" WHERE bot IN ({marks}) AND other IN ({marks})", [*names, *names]):
            out.setdefault(bot, {})[other] = Pairing(wins, draws, losses)
        return out

    def history(self, bot: str, points: int = HISTORY_POINTS) -> list[tuple[int, float]]:
        """(game number, Elo after it) of ``bot``'s rated games, at most ``points`` of
        them evenly spread (the first and the last always)."""
        rows = self._all("SELECT game, elo FROM season_bot_games WHERE bot = ?"
                         " AND elo IS NOT NULL ORDER BY game", (bot,))
        if len(rows) <= points:
            return [(int(n), float(e)) for n, e in rows]
        step = (len(rows) - 1) / (points - 1)
        return [(int(rows[round(i * step)][0]), float(rows[round(i * step)][1]))
                for i in range(points)]
