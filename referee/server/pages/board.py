"""The leaderboard's and the bot pages' values, built from the digest (call them with
the digest's lock held, in a worker thread)."""

from __future__ import annotations

import time
from typing import Any, Final

import attrs
from markupsafe import Markup

from referee.competition import history_of, latest_fit, ranks_at
from referee.config import VERSION_MARK
from referee.core import FaultReason
from referee.server.pages.chart import dated_chart
from referee.server.pages.digest import Digest, Pairing
from referee.server.pages.site import Site

__all__ = [
    "BOARD_ROWS",
    "GAMES_PER_PAGE",
    "GameFilter",
    "board_page_of",
    "board_values",
    "bot_values",
    "crosstable_html",
    "crosstable_values",
    "recent_values",
]

#: Bots a page of the leaderboard lists: a page's cost does not grow with the field.
BOARD_ROWS: Final = 100

#: Games a bot page lists at once.
GAMES_PER_PAGE: Final = 50
#: From this many bots on the crosstable's columns are numbered (names in a legend).
NUMBERED_FROM: Final = 8
#: The most bots of the crosstable (the best rated of the leaderboard's page): its size
#: grows as their square.
CROSSTABLE_BOTS: Final = 60
#: The games and the forfeits a participant's page lists (the newest).
RECENT: Final = 20
#: The rank changes the leaderboard shows are over this long (seconds).
RANK_CHANGE_S: Final = 86400.0


def base_name(bot: str) -> str:
    return bot.partition(VERSION_MARK)[0]


def _row(site: Site, bot: str) -> dict[str, Any]:
    digest = site.digest
    belief = digest.belief(bot)
    low, high = belief.interval
    facts = digest.bots.get(bot)
    sub = site.entrants.get(bot)
    placement = site.state.config.ladder.placement_games
    return {
        "bot": bot, "base": base_name(bot),
        "version": None if sub is None else sub.version,
        "participant": None if sub is None else sub.participant,
        "elo": round(belief.mu), "low": round(low), "high": round(high),
        "games": 0 if facts is None else facts.games,
        "score": None if facts is None else facts.score,
        "placing": belief.games < placement,
        "forfeits": {} if facts is None else {str(r): n for r, n in
                                              sorted(facts.forfeits.items())},
        "time": None if facts is None else facts.time_figures(),
        "active": bot in site.active,
    }


def _ranked(site: Site) -> tuple[list[str], list[str]]:
    """The active bots by rating (best first), and the retired ones."""
    digest = site.digest
    names = set(digest.bots) | site.active
    order = sorted(names, key=lambda bot: (-round(digest.belief(bot).mu), bot))
    return ([b for b in order if b in site.active], [b for b in order if b not in site.active])


def _pages(count: int) -> int:
    return max(1, -(-count // BOARD_ROWS))


def board_values(site: Site, page: int = 1) -> dict[str, Any]:
    """A page of the leaderboard (:data:`BOARD_ROWS` active bots by rating, each with its
    rank change over RANK_CHANGE_S and its Elo in the last full fit; a page past the
    last is the last), then the retired bots: only the page's rows are built."""
    active, retired = _ranked(site)
    pages = _pages(len(active))
    page = min(max(page, 1), pages)
    first = (page - 1) * BOARD_ROWS
    rows = [_row(site, bot) for bot in active[first:first + BOARD_ROWS]]
    db = site.state.store.path
    then = ranks_at(db, time.time() - RANK_CHANGE_S)
    fitted_at, fitted = latest_fit(db)
    for rank, row in enumerate(rows, first + 1):
        row["rank"] = rank
        before = then.get(row["bot"])
        row["change"] = None if before is None else before - rank
        row["fitted"] = None if row["bot"] not in fitted else round(fitted[row["bot"]])
    return {"rows": rows, "retired": [_row(site, bot) for bot in retired],
            "ranked_before": bool(then),
            "fitted_at": None if fitted_at is None else time.strftime(
                "%Y-%m-%d %H:%M UTC", time.gmtime(fitted_at)),
            "games": site.digest.stored, "page": page, "pages": pages,
            "live": "/live/board" if page == 1 else f"/live/board?page={page}",
            "placement": site.state.config.ladder.placement_games}


def board_page_of(site: Site, name: str) -> int | None:
    """The leaderboard's page of the active bot ``name`` (or of the best rated active
    version of the bot of that name), None when there is none."""
    active, _ = _ranked(site)
    for rank, bot in enumerate(active):
        if name in (bot, base_name(bot)):
            return rank // BOARD_ROWS + 1
    return None


def crosstable_values(site: Site, board: list[dict[str, Any]],
                      table: dict[str, dict[str, Pairing]] | None = None) -> dict[str, Any]:
    """Row against column among the best rated bots of a page of the leaderboard (its
    ``board`` rows): score, and results (from ``table``, their pairings, when read)."""
    names = [r["bot"] for r in board][:CROSSTABLE_BOTS]
    if table is None:
        table = site.digest.stored_games.pairings(names)
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


def crosstable_html(site: Site, board: list[dict[str, Any]], pages: int) -> Markup:
    """The crosstable of a page of the leaderboard, rendered: the kept rendering while
    its bots and their results are the same (blocking, with the digest's lock held)."""
    names = [r["bot"] for r in board][:CROSSTABLE_BOTS]
    table = site.digest.stored_games.pairings(names)
    key = (tuple(names), len(board), pages > 1, tuple(sorted(
        (a, b, p.wins, p.draws, p.losses) for a, row in table.items() for b, p in row.items())))
    text = site.crosstables.get(key)
    if text is None:
        text = site.render_part("crosstable.html", crosstable=crosstable_values(site, board, table),
                           pages=pages)
        site.crosstables.put(key, text)
    return Markup(text)  # rendered by the autoescaping templates


@attrs.frozen
class GameFilter:
    """Which of a bot's games a page lists: against whom, at which table size, with
    which result (``won``, ``lost``, ``forfeit``); empty: any."""

    opponent: str = ""
    size: int = 0
    result: str = ""
    page: int = 1

    RESULTS = ("won", "lost", "forfeit")


def bot_values(site: Site, bot: str, wanted: GameFilter) -> dict[str, Any] | None:
    """A bot's page: its versions, their ratings over time, its games (filtered and
    paged, read from the database), forfeits and time use; None for a bot nobody knows."""
    digest: Digest = site.digest
    stored = digest.stored_games
    base = base_name(bot)
    versions = sorted({b for b in [*digest.bots, *site.entrants] if base_name(b) == base},
                      key=lambda b: (len(b), b))
    if bot not in versions:
        return None
    facts = digest.bots.get(bot)
    total = 0 if facts is None else facts.games
    page = max(wanted.page, 1)
    kept, shown = stored.bot_games(bot, opponent=wanted.opponent, size=wanted.size,
                                   result=wanted.result,
                                   offset=(page - 1) * GAMES_PER_PAGE, limit=GAMES_PER_PAGE)
    pages = max(1, -(-kept // GAMES_PER_PAGE))
    if page > pages:  # past the last page: the last one
        page = pages
        kept, shown = stored.bot_games(bot, opponent=wanted.opponent, size=wanted.size,
                                       result=wanted.result,
                                       offset=(page - 1) * GAMES_PER_PAGE,
                                       limit=GAMES_PER_PAGE)
    forfeits = [(g, seat) for g in stored.forfeit_games(bot)
                if (seat := g.seat_of(bot)) is not None]
    return {
        "bot": bot, "row": _row(site, bot),
        "versions": [_row(site, v) for v in versions],
        "chart": dated_chart({v: history_of(site.state.store.path, v) for v in versions}),
        "games": shown, "total": total, "kept": kept, "page": page,
        "pages": pages, "filter": wanted, "opponents": stored.opponents(bot),
        "sizes": stored.sizes(bot), "results": GameFilter.RESULTS,
        "forfeits": forfeits, "reasons": [str(r) for r in FaultReason],
    }


def recent_values(site: Site, participant: str) -> dict[str, Any]:
    """A participant's page: the newest games of their bots, and the newest forfeits
    (each game with the seats of their bots in it); read from the database and the
    entrants, not the digest's bots (no need of its lock)."""
    stored = site.digest.stored_games
    mine = sorted(b for b, sub in site.entrants.items() if sub.participant == participant)
    games = {g.number: g for b in mine for g in stored.newest_games(b, RECENT)}
    faults = {g.number: g for b in mine for g in stored.forfeit_games(b, RECENT)}

    def lines(found: dict[int, Any], keep: Any) -> list[tuple[Any, list[int]]]:
        newest = sorted(found, reverse=True)[:RECENT]
        return [(found[n], [s.seat for s in found[n].seats if keep(s)]) for n in newest]

    return {"recent": lines(games, lambda s: s.bot in mine),
            "errors": lines(faults, lambda s: s.bot in mine),
            "my_bots": mine}
