"""The finals of a competition's database: the plan kept in the competition's store (the
finalists, deals, table size), played by :func:`referee.competition.finals.run_finals`
into a database of their own (``DB-finals.sqlite`` beside the competition's), the same
way from ``taki-referee finals`` and from the organizer's page inside the server.

The plan is kept when the finals begin, so finals stopped by a kill play only the
missing games when run again: the finals' league store is resumable and every game is
stored once. Their report (``referee.present``) is the caller's to write.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from pathlib import Path
from typing import Final

import attrs
import trio

from referee.competition.bot_specs import bot_spec
from referee.competition.config import CompetitionConfig
from referee.competition.errors import CompetitionError
from referee.competition.finals import FinalsSettings, FinalStanding, run_finals
from referee.competition.finals_plan import FinalsPlan
from referee.competition.ladder_control import GameLanded
from referee.competition.season import SeasonSecret
from referee.competition.store import CompetitionStore
from referee.competition.workspace import Workspace
from referee.core import MatchSettings, total_games
from referee.league import ResultStore

__all__ = ["FINALS_REPORT", "FinalsPhase", "FinalsProgress", "finals_db", "finals_folder",
           "finals_title", "play_planned_finals", "played_games", "read_standings"]

#: The finals' report in their folder (its bots' pages beside it, the standings in
#: ``finals.json``).
FINALS_REPORT: Final = "finals.html"


class FinalsPhase(enum.Enum):
    NOT_BEGUN = "not begun"
    PLAYING = "playing"
    DONE = "done"
    FAILED = "failed"


@attrs.define
class FinalsProgress:
    """Where a server's finals stand (changed on the Trio thread only)."""

    phase: FinalsPhase = FinalsPhase.NOT_BEGUN
    plan: FinalsPlan | None = None
    #: The games of the whole round robin.
    total: int = 0
    standings: tuple[FinalStanding, ...] = ()
    #: Why the finals stopped (FAILED), in one line.
    problem: str = ""
    #: Set when the organizer begins the finals.
    begun: trio.Event = attrs.field(factory=trio.Event)

    def playing(self, plan: FinalsPlan) -> None:
        """The finals of ``plan`` are being played."""
        self.plan = plan
        self.total = total_games(len(plan.entrants), plan.table_size, plan.deals)
        if self.phase is FinalsPhase.NOT_BEGUN:
            self.phase = FinalsPhase.PLAYING


def finals_db(db: Path) -> Path:
    """The finals' database beside the competition's ``db``."""
    return db.with_name(f"{db.stem}-finals.sqlite")


def finals_title(config: CompetitionConfig) -> str:
    """The title of the finals' report."""
    return f"Finals: {config.competition.name}"


def finals_folder(workspace: Workspace) -> Path:
    """Where a server writes the finals' report and standings."""
    return workspace.root / "finals"


def played_games(path: Path) -> int:
    """The games stored in a finals database (none yet: 0). Blocking."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with ResultStore(path, readonly=True) as results:
        return results.game_count()


def finals_settings(plan: FinalsPlan, config: CompetitionConfig, workspace: Workspace,
                    season: SeasonSecret) -> FinalsSettings:
    """How the finals of ``plan`` are played: their deals from the season's secret
    (:attr:`SeasonSecret.finals_seed`), the rest as the competition file says."""
    ladder = config.ladder
    match = MatchSettings(rules=config.rules, time=config.time,
                          log_dir=workspace.root / "finals-logs")
    return FinalsSettings(
        deals=plan.deals, table_size=plan.table_size, match=match,
        seed=season.finals_seed, concurrency=ladder.concurrency,
        workers=ladder.workers or None, dask=ladder.dask or None)


def read_standings(path: Path) -> tuple[FinalStanding, ...]:
    """The standings written to ``path`` (none when the file is gone). Blocking."""
    try:
        rows = json.loads(path.read_text())["standings"]
    except FileNotFoundError:
        return ()
    return tuple(FinalStanding(**row) for row in rows)


async def play_planned_finals(
    plan: FinalsPlan, config: CompetitionConfig, store: CompetitionStore,
    workspace: Workspace, db: Path, standings_path: Path, *,
    on_game: Callable[[GameLanded], None] | None = None,
) -> tuple[FinalStanding, ...]:
    """Play the finals of ``plan`` into the database ``db`` (only the games missing) and
    write their standings to ``standings_path`` (JSON); the standings."""
    plan.check()
    subs = {s.entrant: s for s in await trio.to_thread.run_sync(store.submissions)
            if s.entrant is not None}
    missing = [e for e in plan.entrants if e not in subs]
    if missing:
        raise CompetitionError(f"the finalists {', '.join(missing)} are not in the database")
    bots = [bot_spec(subs[e], e, config, workspace) for e in plan.entrants]
    season = await trio.to_thread.run_sync(store.season, config.ladder.seed or None)
    settings = finals_settings(plan, config, workspace, season)
    return await run_finals(db, bots, settings, standings_path, on_game=on_game)
