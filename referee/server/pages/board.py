"""The leaderboard's and the bot pages' values, built from the digest (call them with
the digest's lock held, in a worker thread)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

import attrs

from referee.competition.history import history_of, latest_fit, ranks_at
from referee.config import VERSION_MARK
from referee.core import FaultReason
from referee.server.pages.chart import dated_chart
from referee.server.pages.digest import Digest, GameLine
from referee.server.pages.site import Site

__all__ = ["GAMES_PER_PAGE", "GameFilter", "board_values", "bot_values", "crosstable_values",
           "recent_values"]

#: Games a bot page lists at once.
GAMES_PER_PAGE: Final = 50
#: From this many bots on the crosstable's columns are numbered (names in a legend).
NUMBERED_FROM: Final = 8
#: The most bots of the crosstable (the best rated): its size grows as their square.
CROSSTABLE_BOTS: Final = 120
#: The games and the forfeits a participant's page lists (the newest).
RECENT: Final = 20
#: The rank changes the leaderboard shows are over this long (seconds).
RANK_CHANGE_S: Final = 86400.0


def base_name(bot: str) -> str:
    return bot.partition(VERSION_MARK)[0]


def _row(site: Site, bot: str) -> dict[str, Any]:
    digest = site.digest
    belief = digest.ratings.belief(bot)
    low, high = belief.interval
    facts = digest.bots.get(bot)
    sub = site.entrants.get(bot)
    placement = site.state.config.ladder.placement_games
    return {
        "bot": bot, "base": base_name(bot),
        "version": None if sub is None else sub.version,
        "participant": None if sub is None else sub.participant,
        "elo": round(belief.mu), "low": round(low), "high": round(high),
        "games": 0 if facts is None else len(facts.games),
        "score": None if facts is None else facts.score,
        "placing": belief.games < placement,
        "forfeits": {} if facts is None else {str(r): n for r, n in
                                              sorted(facts.forfeits.items())},
        "time": None if facts is None else facts.time_figures(),
        "active": bot in site.active,
    }


def board_values(site: Site) -> dict[str, Any]:
    """The leaderboard: the active bots by rating (with each one's rank change over
    RANK_CHANGE_S and its Elo in the last full fit), then the retired ones."""
    names = set(site.digest.bots) | site.active
    rows = sorted((_row(site, bot) for bot in names), key=lambda r: (-r["elo"], r["bot"]))
    active = [r for r in rows if r["active"]]
    db = site.state.store.path
    then = ranks_at(db, time.time() - RANK_CHANGE_S)
    fitted_at, fitted = latest_fit(db)
    for rank, row in enumerate(active, 1):
        row["rank"] = rank
        before = then.get(row["bot"])
        row["change"] = None if before is None else before - rank
        row["fitted"] = None if row["bot"] not in fitted else round(fitted[row["bot"]])
    return {"rows": active, "retired": [r for r in rows if not r["active"]],
            "ranked_before": bool(then),
            "fitted_at": None if fitted_at is None else time.strftime(
                "%Y-%m-%d %H:%M UTC", time.gmtime(fitted_at)),
            "games": len(site.digest.games),
            "placement": site.state.config.ladder.placement_games}


def crosstable_values(site: Site) -> dict[str, Any]:
    """Row against column among the active bots (by rating): score, and results."""
    board = board_values(site)["rows"]
    names = [r["bot"] for r in board][:CROSSTABLE_BOTS]
    table = site.digest.crosstable
    cells = []
    for a in names:
        row: list[dict[str, Any] | str | None] = []
        for b in names:
            if a == b:
                row.append("self")
                continue
            pairing = table.get(a, {}).get(b)
            if pairing is None or not pairing.games:
                row.append(None)
                continue
            # The shade from 0 (lost every time) through 5 (even) to 10 (won every time).
            row.append({"score": pairing.score, "wins": pairing.wins, "draws": pairing.draws,
                        "losses": pairing.losses, "shade": round(pairing.score * 10)})
        cells.append((a, row))
    return {"names": names, "cells": cells, "numbered": len(names) >= NUMBERED_FROM,
            "left_out": len(board) - len(names)}


@attrs.frozen
class GameFilter:
    """Which of a bot's games a page lists: against whom, at which table size, with
    which result (``won``, ``lost``, ``forfeit``); empty: any."""

    opponent: str = ""
    size: int = 0
    result: str = ""
    page: int = 1

    RESULTS = ("won", "lost", "forfeit")

    def keeps(self, bot: str, game: GameLine) -> bool:
        seat = game.seat_of(bot)
        if seat is None:
            return False
        if self.opponent and game.seat_of(self.opponent) is None:
            return False
        if self.size and game.size != self.size:
            return False
        if self.result == "won":
            return seat.place == 1
        if self.result == "lost":
            return seat.place != 1
        if self.result == "forfeit":
            return seat.forfeit is not None
        return True


def bot_values(site: Site, bot: str, wanted: GameFilter) -> dict[str, Any] | None:
    """A bot's page: its versions, their ratings over time, its games (filtered and
    paged), forfeits and time use; None for a bot nobody knows."""
    digest: Digest = site.digest
    base = base_name(bot)
    versions = sorted({b for b in [*digest.bots, *site.entrants] if base_name(b) == base},
                      key=lambda b: (len(b), b))
    if bot not in versions:
        return None
    facts = digest.bots.get(bot)
    numbers: Sequence[int] = () if facts is None else facts.games
    games = [digest.games[n - 1] for n in reversed(numbers)]
    kept = [g for g in games if wanted.keeps(bot, g)]
    pages = max(1, -(-len(kept) // GAMES_PER_PAGE))
    page = min(max(wanted.page, 1), pages)
    shown = kept[(page - 1) * GAMES_PER_PAGE:page * GAMES_PER_PAGE]
    opponents = sorted({s.bot for g in games for s in g.seats if s.bot != bot})
    forfeits = [(g, g.seat_of(bot)) for g in games
                if (seat := g.seat_of(bot)) is not None and seat.forfeit is not None][:20]
    return {
        "bot": bot, "row": _row(site, bot),
        "versions": [_row(site, v) for v in versions],
        "chart": dated_chart({v: history_of(site.state.store.path, v) for v in versions}),
        "games": shown, "total": len(games), "kept": len(kept), "page": page,
        "pages": pages, "filter": wanted, "opponents": opponents,
        "sizes": sorted({g.size for g in games}), "results": GameFilter.RESULTS,
        "forfeits": forfeits, "reasons": [str(r) for r in FaultReason],
    }


def recent_values(site: Site, participant: str) -> dict[str, Any]:
    """A participant's page: the newest games of their bots, and the newest forfeits
    (each game with the seats of their bots in it)."""
    digest: Digest = site.digest
    mine = sorted(b for b, sub in site.entrants.items() if sub.participant == participant)
    lists = [digest.bots[b].games for b in mine if b in digest.bots]
    newest = sorted({n for games in lists for n in games[-RECENT:]}, reverse=True)[:RECENT]
    faults: list[int] = []
    for games in lists:  # each bot's newest forfeits, from its newest game back
        found = 0
        for n in reversed(games):
            seats = digest.games[n - 1].seats
            if any(s.bot in mine and s.forfeit is not None for s in seats):
                faults.append(n)
                found += 1
                if found == RECENT:
                    break

    def line(n: int) -> tuple[GameLine, list[int]]:
        game = digest.games[n - 1]
        return game, [s.seat for s in game.seats if s.bot in mine]

    return {"recent": [line(n) for n in newest],
            "errors": [line(n) for n in sorted(set(faults), reverse=True)[:RECENT]],
            "my_bots": mine}
