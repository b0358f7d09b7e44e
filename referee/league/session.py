"""A league from its file to its stored games, for every front end.

The command line's ``league`` and the competition server run a league the same way:
pick where its games are played, check that its bots start (before the database is
touched: a league whose bots cannot start stores nothing), claim the database, take the
league's master seed from it, and play what is missing. :func:`play_league` is that run;
the front ends only read arguments and print.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from referee.config import LeagueConfig
from referee.core import GameOutcome, UserError
from referee.league.botcheck import require_bots
from referee.league.dask_executor import DaskExecutor
from referee.league.pool_executor import PoolExecutor
from referee.league.runner import Executor, LocalExecutor, run_league
from referee.league.store import ResultStore

if TYPE_CHECKING:
    from referee.shell import RemoteSeats

__all__ = ["ExecutorError", "PlayedLeague", "choose_executor", "league_executor", "play_league"]


class ExecutorError(UserError):
    """The games cannot be played where the settings say (one line, exit status 2)."""


@attrs.frozen
class PlayedLeague:
    """What a run of a league did: the league's master seed and the games it stored."""

    seed: int
    played: int


def choose_executor(concurrency: int, *, workers: int | None = None,
                    dask: str | None = None, remote: bool = False) -> Executor:
    """Where the games are played: on the Dask scheduler ``dask``, else in ``workers``
    referee processes on this machine, else ``concurrency`` units at a time in this
    process. ``remote``: some bots connect to this process, which neither Dask nor
    worker processes can serve (ExecutorError). ClusterError when the scheduler cannot
    be reached."""
    if workers is not None and workers < 1:
        raise ExecutorError(f"workers must be at least 1, got {workers}")
    if dask is not None:
        if remote:
            raise ExecutorError("remote bots connect to this referee; they need the local"
                                " executor, not Dask")
        return DaskExecutor(dask)
    if workers is not None:
        if remote:
            raise ExecutorError("workers: remote bots connect to this referee process;"
                                " play them without worker processes")
        return PoolExecutor(workers)
    return LocalExecutor(concurrency)


def league_executor(config: LeagueConfig, *, workers: int | None = None,
                    dask: str | None = None) -> Executor:
    """A league's executor (:func:`choose_executor`): the command's ``workers`` and
    ``dask`` when given, else the league file's."""
    file_dask = None if config.executor == "local" else config.executor
    return choose_executor(
        config.concurrency,
        workers=workers if workers is not None else config.workers,
        dask=dask if dask is not None else file_dask,
        remote=any(b.remote for b in config.bots))


async def play_league(
    config: LeagueConfig,
    db: Path,
    *,
    executor: Executor,
    check_bots: bool = True,
    log_dir: Path | None = None,
    on_seed: Callable[[int], None] | None = None,
    on_game: Callable[[GameOutcome], None] | None = None,
    remote: RemoteSeats | None = None,
) -> PlayedLeague:
    """Play every game of the league that the database ``db`` does not hold yet.

    With ``check_bots``, every local bot is started once first (not on Dask, where the
    bots need only exist on the workers, which check them), and an exception group of
    :class:`~referee.league.botcheck.BotCheckError` stops the run before the database is
    opened. ``on_seed`` hears the league's master seed before the first game,
    ``on_game`` each game stored. StoreError when the database cannot be used."""
    if check_bots and not isinstance(executor, DaskExecutor):
        await require_bots(config.bots, config.match.time,
                           limit=config.concurrency * config.table_size)
    seed: list[int] = []

    def seeded(value: int) -> None:
        seed.append(value)
        if on_seed is not None:
            on_seed(value)

    with ResultStore(db) as store:
        played = await run_league(config, store, log_dir=log_dir, on_game=on_game,
                                  on_seed=seeded, executor=executor, remote=remote)
    return PlayedLeague(seed[0], played)
