"""The finals inside the server: begun from the organizer's page, played from the plan
kept in the competition's database (``referee.competition.play_planned_finals``, as
``taki-referee finals`` plays them), then their report; a server killed during the
finals plays only the missing games at its next start."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import trio

from referee.competition import (
    FINALS_REPORT,
    CompetitionConfig,
    CompetitionError,
    CompetitionStore,
    FinalsPhase,
    FinalsPlan,
    FinalsProgress,
    FinalStanding,
    Workspace,
    finals_db,
    finals_folder,
    finals_title,
    play_planned_finals,
    played_games,
    read_standings,
)
from referee.core import BotStartError
from referee.league import StoreError
from referee.present import write_report

__all__ = ["play_and_report", "run_finals_link"]


async def play_and_report(plan: FinalsPlan, config: CompetitionConfig,
                          store: CompetitionStore, workspace: Workspace, db: Path,
                          report: Path) -> tuple[FinalStanding, ...]:
    """Play the finals of ``plan`` into ``db``, their standings beside ``report``
    (``.json``), then write the report; the standings."""
    standings = await play_planned_finals(plan, config, store, workspace, db,
                                          report.with_suffix(".json"))
    await trio.to_thread.run_sync(
        lambda: write_report(db, report, title=finals_title(config)))
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
    report = finals_folder(workspace) / FINALS_REPORT
    if plan is not None:  # begun before this start: the ladder stays paused from now
        progress.playing(plan)
        if await trio.to_thread.run_sync(store.finals_done):
            progress.standings = await trio.to_thread.run_sync(
                read_standings, report.with_suffix(".json"))
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
        progress.standings = await play_and_report(
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
