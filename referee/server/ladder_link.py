"""The ladder inside the server: its games go to the competition's database (so
``taki-referee ratings`` and ``report`` read them), and its active bots follow the
submissions (a bot that passes its check enters as ``name@N``; one that retires, or whose
participant is disabled, leaves)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

import trio

from referee.competition import (
    CompetitionError,
    LadderControl,
    LadderSettings,
    bot_spec,
    run_ladder,
)
from referee.core import BotSpec, MatchSettings
from referee.league import ResultStore
from referee.server.state import ServerState

__all__ = ["ladder_settings", "run_ladder_link"]

#: How often the active bots are read again from the database without being told
#: (``participants disable`` runs in another process).
POLL_S: Final = 2.0


def ladder_settings(state: ServerState) -> LadderSettings:
    config = state.config
    ladder = config.ladder
    match = MatchSettings(
        rules=config.rules, time=config.time, log_dir=state.workspace.root / "logs",
        # The game pages show each game's replay (referee.server.pages).
        replay_dir=state.workspace.root / "replays")
    return LadderSettings(
        match=match, table_sizes=ladder.table_sizes,
        deals=ladder.deals, placement_games=ladder.placement_games,
        seed=None if state.season is None else state.season.seed,
        concurrency=ladder.concurrency,
        workers=ladder.workers or None, dask=ladder.dask or None)


def active_bots(state: ServerState) -> list[BotSpec]:
    """The bots that play now, as the ladder starts them. Blocking."""
    out = []
    for sub in state.store.active():
        assert sub.entrant is not None
        out.append(bot_spec(sub, sub.entrant, state.config, state.workspace))
    return out


async def run_ladder_link(state: ServerState, db: Path, *,
                          task_status: trio.TaskStatus[Callable[[], None]]
                          = trio.TASK_STATUS_IGNORED) -> None:
    """Run the ladder until cancelled; started: a function that tells it the active
    bots changed."""
    if state.season is None:
        await state.open_season()
    try:
        settings = ladder_settings(state)
        settings.check()
    except ValueError as exc:
        raise CompetitionError(f"{state.config.path}: [ladder]: {exc}") from None
    results = await trio.to_thread.run_sync(ResultStore, db)
    changed = trio.Event()
    try:
        control = LadderControl(await trio.to_thread.run_sync(active_bots, state),
                                paused=await trio.to_thread.run_sync(state.store.paused))
        state.ladder = control

        def tell() -> None:
            changed.set()

        async with trio.open_nursery() as nursery:
            await nursery.start(run_ladder, results, settings, control)
            task_status.started(tell)
            playing = {b.name for b in await trio.to_thread.run_sync(active_bots, state)}
            while True:
                with trio.move_on_after(POLL_S):
                    await changed.wait()
                changed = trio.Event()
                bots = await trio.to_thread.run_sync(active_bots, state)
                if {b.name for b in bots} != playing:
                    control.set_bots(bots)
                    playing = {b.name for b in bots}
    finally:
        results.close()
