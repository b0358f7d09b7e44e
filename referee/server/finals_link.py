"""The finals inside the server: begun from the organizer's page, played by the same code
as ``taki-referee finals`` (``referee.competition.finals``) into a database of their own
(``DB-finals.sqlite`` beside the competition's), then their report.

The plan (the finalists, deals, table size) is kept in the competition's database when
the finals begin, so a server killed during the finals plays only the missing games at
its next start: the finals' league store is resumable and every game is stored once.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from pathlib import Path
from typing import Final

import attrs
import trio

from referee.competition import (
    CompetitionConfig,
    CompetitionError,
    CompetitionStore,
    FinalsPlan,
    FinalsSettings,
    FinalStanding,
    GameLanded,
    Workspace,
    bot_spec,
    run_finals,
)
from referee.core import BotStartError, MatchSettings, total_games
from referee.league import ResultStore, StoreError
from referee.present import write_report

__all__ = ["REPORT_NAME", "FinalsPhase", "FinalsProgress", "finals_db", "finals_folder",
           "play_planned_finals", "played_games", "run_finals_link"]

#: The finals' report in their folder (its bots' pages beside it, the standings in
#: ``finals.json``).
REPORT_NAME: Final = "finals.html"


class FinalsPhase(enum.Enum):
    NOT_BEGUN = "not begun"
    PLAYING = "playing"
    DONE = "done"
    FAILED = "failed"


@attrs.define
class FinalsProgress:
    """Where the server's finals stand (changed on the Trio thread only)."""

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
    """The finals' database beside the competition's (as ``taki-referee finals``)."""
    return db.with_name(f"{db.stem}-finals.sqlite")


def finals_folder(workspace: Workspace) -> Path:
    """Where the server writes the finals' report and standings."""
    return workspace.root / "finals"


def played_games(path: Path) -> int:
    """The games stored in a finals database (none yet: 0). Blocking."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with ResultStore(path, readonly=True) as results:
        return results.game_count()


def finals_settings(plan: FinalsPlan, config: CompetitionConfig,
                    workspace: Workspace) -> FinalsSettings:
    ladder = config.ladder
    match = MatchSettings(rules=config.rules, time=config.time,
                          log_dir=workspace.root / "finals-logs")
    return FinalsSettings(
        deals=plan.deals, table_size=plan.table_size, match=match,
        seed=ladder.seed or None, concurrency=ladder.concurrency,
        workers=ladder.workers or None, dask=ladder.dask or None)


def read_standings(report: Path) -> tuple[FinalStanding, ...]:
    """The standings written beside ``report`` (none when the file is gone). Blocking."""
    try:
        rows = json.loads(report.with_suffix(".json").read_text())["standings"]
    except FileNotFoundError:
        return ()
    return tuple(FinalStanding(**row) for row in rows)


async def play_planned_finals(
    plan: FinalsPlan, config: CompetitionConfig, store: CompetitionStore,
    workspace: Workspace, db: Path, report: Path, *,
    on_game: Callable[[GameLanded], None] | None = None,
) -> tuple[FinalStanding, ...]:
    """Play the finals of ``plan`` into the database ``db`` (only the games missing),
    write the standings beside ``report`` (``.json``) and the report; the standings."""
    plan.check()
    subs = {s.entrant: s for s in await trio.to_thread.run_sync(store.submissions)
            if s.entrant is not None}
    missing = [e for e in plan.entrants if e not in subs]
    if missing:
        raise CompetitionError(f"the finalists {', '.join(missing)} are not in the database")
    bots = [bot_spec(subs[e], e, config, workspace) for e in plan.entrants]
    settings = finals_settings(plan, config, workspace)
    standings = await run_finals(db, bots, settings, report.with_suffix(".json"),
                                 on_game=on_game)
    await trio.to_thread.run_sync(
        lambda: write_report(db, report, title=f"Finals: {config.competition.name}"))
    return standings


async def run_finals_link(
    config: CompetitionConfig, store: CompetitionStore, workspace: Workspace,
    progress: FinalsProgress, *, say: Callable[[str], None] = print,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Play the server's finals once they have begun (at once when they had begun before
    this start), then return. A failure is kept in ``progress`` (and said), not raised:
    the server goes on serving the pages."""
    plan = await trio.to_thread.run_sync(store.finals_plan)
    report = finals_folder(workspace) / REPORT_NAME
    if plan is not None:  # begun before this start: the ladder stays paused from now
        progress.playing(plan)
        if await trio.to_thread.run_sync(store.finals_done):
            progress.standings = await trio.to_thread.run_sync(read_standings, report)
            progress.phase = FinalsPhase.DONE
            task_status.started()
            return
    task_status.started()
    if plan is None:
        await progress.begun.wait()
        plan = await trio.to_thread.run_sync(store.finals_plan)
        assert plan is not None, "the finals begin with their plan stored"
        progress.playing(plan)
    played = await trio.to_thread.run_sync(played_games, finals_db(store.path))
    say(f"the finals: {played} of {progress.total} games played, among"
        f" {', '.join(plan.entrants)}")
    try:
        progress.standings = await play_planned_finals(
            plan, config, store, workspace, finals_db(store.path), report)
        await trio.to_thread.run_sync(store.finish_finals)
    except* (BotStartError, StoreError, CompetitionError, OSError, ValueError) as group:
        progress.problem = first_line(group)
        progress.phase = FinalsPhase.FAILED
        say(f"the finals stopped: {progress.problem}")
    if progress.phase is not FinalsPhase.FAILED:
        progress.phase = FinalsPhase.DONE
        say("the finals are over: their standings are at /finals")


def first_line(group: BaseException) -> str:
    """The first line of the first error of a group."""
    first = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return str(first).splitlines()[0] if str(first) else type(first).__name__
