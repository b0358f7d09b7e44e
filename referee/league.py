"""Round-robin leagues: schedule lazily, play concurrently, store every game once.

Running the same league again resumes it: games already in the database are skipped,
and the games that were in flight when the referee died are played again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import trio

from .match import GameOutcome, MatchSettings, play_block
from .ratings import GameResult as RatedGame
from .schedule import ScheduledGame, round_robin, total_games
from .settings import LeagueConfig
from .store import GameRecord, ResultStore, SeatRecord


def settings_for(config: LeagueConfig, log_dir: Path | None) -> MatchSettings:
    return MatchSettings(
        rules=config.rules,
        time=config.time,
        fault_policy=config.fault_policy,
        strikes=config.strikes,
        restart=config.restart,
        replay_dir=config.replay_dir,
        log_dir=log_dir,
    )


def record_of(outcome: GameOutcome) -> GameRecord:
    return GameRecord(
        game_id=outcome.game.game_id,
        block=outcome.game.block,
        seed=outcome.game.seed,
        actions=outcome.actions,
        reason=outcome.reason,
        seats=tuple(
            SeatRecord(
                seat=s.seat,
                bot=s.bot,
                place=s.place,
                points=s.points,
                forfeit_reason=None if s.forfeit is None else s.forfeit[0],
                forfeit_detail=None if s.forfeit is None else s.forfeit[1],
            )
            for s in outcome.seats
        ),
        replay=None if outcome.replay is None else str(outcome.replay),
    )


def league_size(config: LeagueConfig) -> int:
    return total_games(len(config.bots), config.table_size, config.deals)


def pending_blocks(config: LeagueConfig, done: set[str]) -> Iterator[list[ScheduledGame]]:
    names = [b.name for b in config.bots]
    for block in round_robin(names, config.table_size, config.deals, config.seed):
        remaining = [g for g in block if g.game_id not in done]
        if remaining:
            yield remaining


async def run_league(
    config: LeagueConfig,
    store: ResultStore,
    *,
    log_dir: Path | None = None,
    on_game: Callable[[GameOutcome], None] | None = None,
) -> int:
    """Play every game of the league that the store does not hold yet; returns how many
    games this run played."""
    store.bind("league", config.identity())
    store.register_bots([(b.name, b.display) for b in config.bots])
    done = store.finished_ids()
    settings = settings_for(config, log_dir)
    specs = {b.name: b for b in config.bots}
    slots = trio.Semaphore(config.concurrency)
    played = 0

    def record(outcome: GameOutcome) -> None:
        nonlocal played
        if store.record(record_of(outcome)):
            played += 1
        if on_game is not None:
            on_game(outcome)

    async def run_block(games: list[ScheduledGame]) -> None:
        try:
            bots = [specs[name] for name in games[0].seats]
            await play_block(games, bots, settings, on_game=record, match_name=games[0].block)
        finally:
            slots.release()

    async with trio.open_nursery() as nursery:
        for block in pending_blocks(config, done):
            await slots.acquire()
            nursery.start_soon(run_block, block)
    return played


def rated_games(store: ResultStore) -> list[RatedGame]:
    """The stored games as rating input, in schedule-id order: the bootstrap draws blocks
    by position, so the order in which concurrent games happened to finish must not
    change the intervals."""
    return [
        RatedGame(places={s.bot: s.place for s in game.seats}, block=game.block)
        for game in sorted(store.games(), key=lambda g: g.game_id)
    ]
