"""The report of a competition's season read from its aggregates, not game by game.

A competition's database keeps its season's aggregates (docs/competition.md, "A season's
aggregates"): each pair's wins, draws and losses, each bot's forfeits, time figures and
games. Those are all the report's per-bot and per-pair figures need, so when they are up
to date the report reads them: the ratings from the pairs' counts (as ``taki-referee
ratings`` does), the rating over the games from the pairs of each bot's games, and the
forfeits and the time use from the bots' rows. The games themselves are read only where
a page lists them, and bounded: the last :data:`LISTED_GAMES` stored on the report, a
bot's last :data:`BOT_GAMES` on its page (by the index of each bot's games), with the
voided games and the infrastructure faults (few: one a voided play).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import attrs

from referee.competition import season_rows
from referee.league import ResultStore
from referee.present.report_data import ReportData, SeasonFigures, history_sizes, with_faults
from referee.ratings import model_named, pair_history, rate_pair_counts

__all__ = ["BOT_GAMES", "LISTED_GAMES", "read_season"]

#: The games the report of a season lists: the last ones stored.
LISTED_GAMES: Final = 1000
#: The games a bot's page of a season lists: its last ones (a thousand bots: 25,000
#: games read).
BOT_GAMES: Final = 25


def read_season(db: Path, points: int) -> ReportData | None:
    """The report of the competition's database ``db`` from its season's aggregates, or
    None when they cannot give it (none kept, behind the games, a league of series, or
    the Plackett-Luce model, which needs whole rankings): then the games are read."""
    with ResultStore(db, readonly=True) as store:
        if model_named(store.meta("rating_model")) == "plackett-luce":
            return None
    rows = season_rows(db, BOT_GAMES, LISTED_GAMES)
    if rows is None:
        return None
    counts = rows.counts
    with ResultStore(db, readonly=True) as store:
        events = store.infra_events()
        wanted = sorted({n for _, games in rows.last_games.values() for n in games}
                        | set(rows.recent))
        by_number = {n: with_faults(game, events) for n, game
                     in zip(wanted, store.games_numbered(wanted), strict=True)}
        figures = SeasonFigures(
            rows.stored, sum(1 for e in events if store.has_game(e.game_id)),
            {bot: (played, tuple(by_number[n] for n in games))
             for bot, (played, games) in rows.last_games.items()})
        data = ReportData(
            db, tuple(by_number[n] for n in sorted(rows.recent)),
            rate_pair_counts(counts, resamples=200, seed=0) if counts.names else None,
            (), {}, rows.forfeits, store.time_use() if rows.times is None else rows.times,
            frozenset(store.retired()), (), store.meta("rules"), store.meta("time"),
            store.game_dates(), tuple(store.voided_games()), figures, "the pairs' counts")
    sizes = history_sizes(rows.stored, points)
    return attrs.evolve(data, history_games=tuple(sizes),
                        history=pair_history(rows.pairs, sizes))
