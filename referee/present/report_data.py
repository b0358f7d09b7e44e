"""What a league report shows, read from a results database (:mod:`.report` reads it
game by game, :mod:`.report_season` a season from its aggregates)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from referee.core import InfraEvent, SeriesResult, TimeSummary, TimeUse
from referee.league import GameRecord
from referee.ratings import RatingReport

__all__ = ["ReportData", "SeasonFigures", "history_sizes", "with_faults"]


@attrs.frozen
class SeasonFigures:
    """What a report of a season read from its aggregates counts beyond the games it
    lists: the games stored, the plays voided by infrastructure faults, and each bot's
    games (how many) with the last of them (the last first)."""

    stored: int
    void_plays: int
    bot_games: Mapping[str, tuple[int, tuple[GameRecord, ...]]]


@attrs.frozen
class ReportData:
    """What a report shows, read from a results database."""

    db: Path
    #: The games listed: every stored game, or a season's last ones (:attr:`stored`).
    games: tuple[GameRecord, ...]
    ratings: RatingReport | None
    #: Games in each prefix of the rating-over-games chart.
    history_games: tuple[int, ...]
    #: Elo of each bot after each prefix (``None`` before its first game).
    history: dict[str, list[float | None]]
    forfeits: dict[str, dict[str, int]]
    #: Each bot's answer times over its stored games.
    times: Mapping[str, TimeUse | TimeSummary] = attrs.field(factory=dict)
    #: The bots that left the league (their games stay, and count in the ratings).
    retired: frozenset[str] = frozenset()
    #: The series of a league of series (R24), in schedule order.
    series: tuple[SeriesResult, ...] = ()
    #: The rules and the time control of the league's last run (JSON), when recorded.
    rules: str | None = None
    time: str | None = None
    #: When the first and the last game finished.
    dates: tuple[str, str] | None = None
    #: The games voided every time they were played (no result), with their faults.
    voided: tuple[GameRecord, ...] = ()
    #: A season read from its aggregates: the games stored (``games`` lists the last
    #: of them), the plays voided by faults, and each bot's games (how many) with the
    #: last of them its page lists. None: ``games`` are all the games.
    season: SeasonFigures | None = None
    #: What the bootstrap resampled for the intervals.
    resampled: str = "the duplicate blocks"

    @property
    def stored(self) -> int:
        """The games stored with a result."""
        return len(self.games) if self.season is None else self.season.stored

    @property
    def void_plays(self) -> int:
        """The plays voided by infrastructure faults, of every game."""
        if self.season is not None:
            return self.season.void_plays
        return sum(len(g.infra) for g in (*self.games, *self.voided))

    def listed(self) -> list[GameRecord]:
        """Every game a page of the report lists (the report's, and the bots' pages')."""
        if self.season is None:
            return [*self.games, *self.voided]
        seen = {g.game_id: g for g in (*self.games, *self.voided)}
        for _, games in self.season.bot_games.values():
            seen.update((g.game_id, g) for g in games)
        return list(seen.values())

    def games_of(self, bot: str) -> tuple[int, list[GameRecord]]:
        """``bot``'s games (how many) and those its page lists."""
        if self.season is not None:
            played, listed = self.season.bot_games.get(bot, (0, ()))
            return played, list(listed)
        own = [g for g in self.games if any(s.bot == bot for s in g.seats)]
        return len(own), own


def history_sizes(games: int, points: int) -> list[int]:
    """The lengths of the growing prefixes the rating over the games is refitted on:
    ``points`` of them evenly spread, the last all the games."""
    return sorted({max(1, round(i * games / points)) for i in range(1, points + 1)}) \
        if games else []


def with_faults(game: GameRecord, events: Sequence[InfraEvent]) -> GameRecord:
    """``game`` with the infrastructure faults that voided its earlier plays."""
    infra = tuple(e for e in events if e.game_id == game.game_id)
    return attrs.evolve(game, infra=infra) if infra else game
