"""The ladder inside the server: its games go to the competition's database (so
``taki-referee ratings`` and ``report`` read them), and its active bots follow the
submissions (a bot that passes its check enters as ``name@N``; one that retires, or whose
participant is disabled, leaves)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

import trio

from referee.competition import (
    CompetitionError,
    CompetitionHost,
    LadderControl,
    LadderSettings,
    LogBudget,
    LogUsage,
    bot_spec,
    is_disk_full,
    run_ladder,
    trim_logs,
)
from referee.core import BotSpec, MatchSettings, leaves
from referee.league import ResultStore

__all__ = ["ladder_settings", "run_ladder_link", "trim_pause"]

#: How often the active bots are read again from the database without being told
#: (``participants disable`` runs in another process).
POLL_S: Final = 2.0
#: How often the free space is read.
DISK_POLL_S: Final = 2.0
#: How often the bot logs are trimmed to their budget.
LOGS_POLL_S: Final = 10.0
#: ... or this many times as long as the last trim took, when that is longer ...
LOGS_PACE: Final = 20.0
#: ... but never longer than this.
LOGS_MAX_PAUSE_S: Final = 300.0
#: After a write failed for want of space, the ladder waits for this much more.
DISK_MARGIN: Final = 16 << 20

log = logging.getLogger("referee.server")


def ladder_settings(state: CompetitionHost) -> LadderSettings:
    config = state.config
    ladder = config.ladder
    match = MatchSettings(
        rules=config.rules, time=config.time, log_dir=state.workspace.logs,
        empty_logs=False,  # a log per bot process, millions in a season: only those with text
        # The game pages show each game's replay (referee.server.pages).
        replay_dir=state.workspace.replays)
    return LadderSettings(
        match=match, table_sizes=ladder.table_sizes,
        deals=ladder.deals, placement_games=ladder.placement_games,
        seed=None if state.season is None else state.season.seed,
        concurrency=ladder.concurrency,
        workers=ladder.workers or None, dask=ladder.dask or None)


def active_bots(state: CompetitionHost) -> list[BotSpec]:
    """The bots that play now, as the ladder starts them. Blocking."""
    out = []
    for sub in state.store.active():
        assert sub.entrant is not None
        out.append(bot_spec(sub, sub.entrant, state.config, state.workspace))
    return out


async def run_ladder_link(state: CompetitionHost, results: ResultStore, *,
                          task_status: trio.TaskStatus[Callable[[], None]]
                          = trio.TASK_STATUS_IGNORED) -> None:
    """Run the ladder on the competition's database (``results``, which the caller
    opened and closes) until cancelled; started: a function that tells it the active
    bots changed."""
    if state.season is None:
        await state.open_season()
    try:
        settings = ladder_settings(state)
        settings.check()
    except ValueError as exc:
        raise CompetitionError(f"{state.config.path}: [ladder]: {exc}") from None
    changed = trio.Event()
    control = LadderControl(await trio.to_thread.run_sync(active_bots, state),
                            paused=await trio.to_thread.run_sync(state.store.paused))
    state.ladder = control

    def tell() -> None:
        changed.set()

    async with trio.open_nursery() as nursery:
        await nursery.start(_keep_playing, state, results, settings, control)
        nursery.start_soon(_watch_disk, state, control)
        nursery.start_soon(_trim_logs, state, control)
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


def _only_disk_full(exc: BaseException) -> bool:
    found = leaves(exc)
    return bool(found) and all(is_disk_full(leaf) for leaf in found)


async def _keep_playing(state: CompetitionHost, results: ResultStore, settings: LadderSettings,
                        control: LadderControl, *,
                        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                        ) -> None:
    """Run the ladder; when a full disk stops it (a replay or a game that cannot be
    written), wait for space, then run it again: the games that were in flight are
    played again, none is stored twice (as after a kill)."""
    started = False
    while True:
        try:
            async with trio.open_nursery() as inner:
                await inner.start(run_ladder, results, settings, control)
                if not started:
                    task_status.started()
                    started = True
            return  # stopped
        except BaseException as exc:
            if not _only_disk_full(exc):
                raise
        disk = state.uploads.disk
        free = await trio.to_thread.run_sync(disk.free)
        log.warning("the disk is full: the ladder stopped its games in flight and waits"
                    " for space (the API and the pages go on)")
        state.disk_failed = True
        # Room: the reserve, and at least DISK_MARGIN more than when the write failed.
        while (await trio.to_thread.run_sync(disk.free)) < max(disk.reserve,
                                                               free + DISK_MARGIN):
            await trio.sleep(DISK_POLL_S)
        state.disk_failed = False
        log.warning("the disk has room again: the ladder goes on")


def trim_pause(took: float) -> float:
    """The pause after a trim of the logs that took ``took`` seconds: a folder of many
    files takes a while to list, and its trims take at most a twentieth of the time (of
    one thread, which shares the pages' interpreter), unless that would leave the logs
    untrimmed for over LOGS_MAX_PAUSE_S."""
    return min(max(LOGS_POLL_S, LOGS_PACE * took), LOGS_MAX_PAUSE_S)


async def _trim_logs(state: CompetitionHost, control: LadderControl) -> None:
    """Keep the ladder's bot logs within their budget, evicting the oldest files."""
    section = state.config.competition
    budget = LogBudget(section.bot_logs_mb << 20, section.logs_mb << 20)
    folder = state.workspace.logs
    evicted = 0
    while True:
        bots = [r.bot for r in control.ratings()] + list(control.active)
        began = trio.current_time()
        usage = await trio.to_thread.run_sync(trim_logs, folder, bots, budget)
        took = trio.current_time() - began
        evicted += usage.evicted
        state.logs = LogUsage(usage.bytes, usage.files, evicted)
        await trio.sleep(trim_pause(took))


async def _watch_disk(state: CompetitionHost, control: LadderControl) -> None:
    """Pause the ladder while the disk is below its reserve, and resume it when space
    returns (unless the organizer paused it meanwhile, or the season or the ladder
    ended)."""
    disk = state.uploads.disk
    while True:
        room = await trio.to_thread.run_sync(disk.has_room)
        if not room and not state.disk_low:
            state.disk_low = True
            control.pause()
            log.warning("the disk is below its reserve of %d MiB: the ladder pauses and"
                        " uploads are refused until space returns", disk.reserve >> 20)
        elif room and state.disk_low:
            state.disk_low = False
            if await trio.to_thread.run_sync(state.may_resume):
                control.resume()
            log.warning("the disk has room again: the ladder goes on")
        await trio.sleep(DISK_POLL_S)
