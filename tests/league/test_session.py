"""play_league and choose_executor: a league run as every front end runs it."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from referee.config.settings import LeagueConfig, load_league
from referee.core.specs import BotSpec
from referee.league.botcheck import BotCheckError
from referee.league.dask_executor import DaskExecutor
from referee.league.pool_executor import PoolExecutor
from referee.league.runner import LocalExecutor, league_size
from referee.league.session import ExecutorError, choose_executor, league_executor, play_league
from referee.league.store import ResultStore

REPO = Path(__file__).resolve().parents[2]


def league(tmp_path: Path, **changes: object) -> LeagueConfig:
    path = tmp_path / "league.toml"
    path.write_text(
        "[league]\ndeals = 1\nconcurrency = 2\n[time]\nmove_ms = 2000\n"
        f'[[bots]]\nname = "a"\ncommand = "python {REPO}/sample_bots/random_bot.py 1"\n'
        f'[[bots]]\nname = "b"\ncommand = "python {REPO}/sample_bots/random_bot.py 2"\n'
    )
    return attrs.evolve(load_league(path), **changes)


def test_the_executor_follows_the_arguments_then_the_file(tmp_path: Path) -> None:
    config = league(tmp_path)
    assert isinstance(league_executor(config), LocalExecutor)
    assert isinstance(league_executor(config, workers=2), PoolExecutor)
    assert isinstance(league_executor(attrs.evolve(config, workers=1)), PoolExecutor)
    assert isinstance(league_executor(config, dask="127.0.0.1:1"), DaskExecutor)
    remote = attrs.evolve(config, bots=(*config.bots, BotSpec("far", None)))
    with pytest.raises(ExecutorError, match="remote bots"):
        league_executor(remote, workers=2)
    with pytest.raises(ExecutorError, match="remote bots"):
        league_executor(remote, dask="127.0.0.1:1")


def test_the_executor_is_chosen_from_the_values_it_needs() -> None:
    local = choose_executor(3)
    assert isinstance(local, LocalExecutor)
    assert isinstance(choose_executor(3, workers=2), PoolExecutor)
    assert isinstance(choose_executor(3, workers=2, dask="127.0.0.1:1"), DaskExecutor)
    with pytest.raises(ExecutorError, match="at least 1"):
        choose_executor(3, workers=0)
    with pytest.raises(ExecutorError, match="remote bots"):
        choose_executor(3, workers=2, remote=True)


async def test_a_league_is_played_once_and_its_seed_is_told(tmp_path: Path) -> None:
    config = league(tmp_path)
    seeds: list[int] = []
    db = tmp_path / "results.sqlite"
    run = await play_league(config, db, executor=LocalExecutor(2), on_seed=seeds.append)
    assert run.played == league_size(config) and seeds == [run.seed]
    again = await play_league(config, db, executor=LocalExecutor(2), on_seed=seeds.append)
    assert again == attrs.evolve(run, played=0) and seeds == [run.seed, run.seed]
    with ResultStore(db, readonly=True) as store:
        assert store.game_count() == league_size(config)


async def test_bots_that_cannot_start_store_nothing(tmp_path: Path) -> None:
    config = league(tmp_path)
    broken = attrs.evolve(config.bots[1], command=attrs.evolve(
        config.bots[1].local_command(), argv=("./no-such-bot",)))
    config = attrs.evolve(config, bots=(config.bots[0], broken))
    db = tmp_path / "results.sqlite"
    with pytest.RaisesGroup(BotCheckError):
        await play_league(config, db, executor=LocalExecutor(2))
    assert not db.exists()
