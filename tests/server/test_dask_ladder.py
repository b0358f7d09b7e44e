"""The server's ladder on a Dask cluster: the bots that participants submitted play
their games on the cluster's worker, and the games land in the competition's database."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import attrs
import psutil
import pytest
import trio
from dask_cluster import local_cluster
from served import RANDOM_BOT, Served, bot_folder, targz

from referee.league.store import ResultStore
from referee.server.ladder_link import run_ladder_link

try:
    import distributed  # noqa: F401
except ImportError as exc:  # pragma: no cover - only without the dask extra
    raise ImportError(f"the Dask ladder test needs dask[distributed] ({exc}); ./tasks test"
                      " installs it") from None

@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """The scheduler's address and the pid of the process that runs the cluster: one
    worker of two threads in that process, on 127.0.0.1."""
    with local_cluster(tmp_path / "cluster.log", 'n_workers=1, threads_per_worker=2,'
                       ' processes=False, protocol="tcp://", host="127.0.0.1"') as (
                           address, pid):
        assert address.startswith("tcp://127.0.0.1:")
        yield address.removeprefix("tcp://"), pid


def _descends_from(pid: int, ancestor: int) -> bool:
    try:
        return any(p.pid == ancestor for p in psutil.Process(pid).parents())
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
async def test_the_ladder_plays_submitted_bots_on_a_dask_cluster(
        served: Served, cluster: tuple[str, int]) -> None:
    address, cluster_pid = cluster
    mark = uuid.uuid4().hex
    entrants = []
    for who in ("alice", "bob"):
        script = f"dask_{who}_{mark}.py"
        folder = bot_folder(served.tmp / who, f"{who}-bot", command=f"python {script} 1",
                            extra={script: RANDOM_BOT.read_text()})
        answer = await served.upload(who, targz(folder))
        done = await served.settled(who, answer.json()["submission"]["id"])
        assert done["status"] == "active", done["output"]
        entrants.append(done["entrant"])
    config = served.state.config
    served.state.config = attrs.evolve(config, ladder=attrs.evolve(
        config.ladder, dask=address, deals=1, placement_games=2, concurrency=2, seed=7))
    db = served.tmp / "competition.sqlite"
    bot_pids: set[int] = set()
    with trio.fail_after(180):
        async with trio.open_nursery() as nursery:
            await nursery.start(run_ladder_link, served.state, db)
            while True:
                for proc in psutil.process_iter(["cmdline"]):
                    if any(mark in word for word in proc.info["cmdline"] or ()):
                        bot_pids.add(proc.pid)
                        assert _descends_from(proc.pid, cluster_pid) or not proc.is_running()
                with ResultStore(db, readonly=True) as results:
                    games = results.game_count()
                if games >= 4:
                    nursery.cancel_scope.cancel()
                await trio.sleep(0.05)
    assert bot_pids, "no bot process was seen"
    with ResultStore(db, readonly=True) as results:
        ids = results.finished_ids()
    assert len(ids) >= 4
    assert all(f"{min(entrants)},{max(entrants)}" in i or
               f"{max(entrants)},{min(entrants)}" in i for i in ids), ids
