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

from referee.competition import (
    season_forfeits,
    season_last_games,
    season_pair_counts,
    season_pair_games,
    season_recent_games,
    season_time_use,
)
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
    counts = season_pair_counts(db)
    pairs = season_pair_games(db) if counts is not None else None
    forfeits, times = season_forfeits(db), season_time_use(db)
    if counts is None or pairs is None or forfeits is None:
        return None
    with ResultStore(db, readonly=True) as store:
        stored = store.game_count()
        events = store.infra_events()
        voided = tuple(store.voided_games())
        last = season_last_games(db, counts.names, BOT_GAMES) or {}
        recent = sorted(season_recent_games(db, LISTED_GAMES) or [])
        wanted = sorted({n for _, listed in last.values() for n in listed} | set(recent))
        by_number = dict(zip(wanted, store.games_numbered(wanted), strict=True))
        listed = [by_number[n] for n in recent]
        void_plays = sum(1 for e in events if store.has_game(e.game_id))
        figures = SeasonFigures(stored, void_plays, {
            bot: (played, tuple(with_faults(by_number[n], events) for n in games
                                if n in by_number))
            for bot, (played, games) in last.items()})
        data = ReportData(
            db, tuple(with_faults(g, events) for g in listed),
            rate_pair_counts(counts, resamples=200, seed=0) if counts.names else None,
            (), {}, forfeits, store.time_use() if times is None else times,
            frozenset(store.retired()), (), store.meta("rules"), store.meta("time"),
            store.game_dates(), voided, figures, "the pairs' counts")
    sizes = history_sizes(stored, points)
    return attrs.evolve(data, history_games=tuple(sizes), history=pair_history(pairs, sizes))
