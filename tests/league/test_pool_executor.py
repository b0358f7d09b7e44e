"""Leagues played in referee worker processes: the same games and results as in one
process, stored once by the coordinator; a bot a worker cannot start stops the league."""

from __future__ import annotations

import io
import pickle
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import trio
from jsonout import strict_json
from probing import check_reports, probe_league, probe_reports
from processes import live_children

from referee.config.settings import load_league
from referee.core.schedule import total_games
from referee.league.pool_executor import PoolExecutor, WorkerError
from referee.league.pool_worker import frame, read_frame
from referee.league.runner import LocalExecutor, run_league
from referee.league.store import ResultStore

REPO = Path(__file__).resolve().parents[2]
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'}"
GREEDY = f"python {REPO / 'sample_bots' / 'greedy_bot.py'}"
REFEREE = Path(sys.executable).with_name("taki-referee")


def league(tmp_path: Path, extra: str = "", crasher: bool = False) -> Path:
    bots = [("greedy", GREEDY), ("random1", f"{RANDOM} 1"), ("random2", f"{RANDOM} 2")]
    if crasher:
        bots[2] = ("crasher", "python -c 'import sys; sys.exit(3)'")
    path = tmp_path / "league.toml"
    path.write_text("[league]\ndeals = 4\nseed = 3\nconcurrency = 2\n" + extra + "".join(
        f'[[bots]]\nname = "{name}"\ncommand = "{command}"\n' for name, command in bots))
    return path


def results(db: Path) -> dict[str, tuple[tuple[str, int, int], ...]]:
    with ResultStore(db, readonly=True) as store:
        return {g.game_id: tuple((s.bot, s.place, s.points) for s in g.seats)
                for g in store.games()}


async def test_workers_play_the_same_league_as_one_process(tmp_path: Path) -> None:
    config = load_league(league(tmp_path))
    with ResultStore(tmp_path / "one.sqlite") as store:
        await run_league(config, store, executor=LocalExecutor(2), log_dir=tmp_path / "l1")
    with ResultStore(tmp_path / "pool.sqlite") as store:
        played = await run_league(config, store, executor=PoolExecutor(2),
                                  log_dir=tmp_path / "l2")
    assert played == total_games(3, 2, 4) == 24
    # The same units, hence the same bot processes' histories: the same games, results
    # and all (the random bots play from their seeds).
    assert results(tmp_path / "pool.sqlite") == results(tmp_path / "one.sqlite")
    assert sorted(p.name for p in (tmp_path / "l2").iterdir()) == sorted(
        p.name for p in (tmp_path / "l1").iterdir())
    assert live_children(zombies=True) == []


async def test_a_bot_a_worker_cannot_start_stops_the_league(tmp_path: Path) -> None:
    config = load_league(league(tmp_path, crasher=True))
    with ResultStore(tmp_path / "r.sqlite") as store, \
            pytest.raises(WorkerError, match="cannot start bot 'crasher'"):
        await run_league(config, store, executor=PoolExecutor(2))
    await trio.sleep(0)
    assert live_children(zombies=True) == []


@pytest.mark.slow
def test_workers_from_the_league_file_and_the_command_line(tmp_path: Path) -> None:
    path = league(tmp_path, extra="workers = 2\n")
    db = tmp_path / "r.sqlite"
    done = subprocess.run([str(REFEREE), "league", str(path), "--db", str(db), "--json",
                           "--log-dir", str(tmp_path / "logs")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert strict_json(done.stdout)["games"] == 24
    bad = subprocess.run([str(REFEREE), "league", str(path), "--db", str(db), "--workers", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--workers must be at least 1" in bad.stderr
    path.write_text(path.read_text().replace("workers = 2", "workers = 0"))
    bad = subprocess.run([str(REFEREE), "league", str(path), "--db", str(db)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "[league] workers: must be at least 1" in bad.stderr


@pytest.mark.slow
def test_sigterm_stops_the_workers_and_their_bots(tmp_path: Path) -> None:
    from test_runner import count_games, league_file, marked_processes, referee, wait_for_games

    marker = uuid.uuid4().hex
    path = league_file(tmp_path, deals=30, marker=marker)
    db = tmp_path / "r.sqlite"
    args = ("league", str(path), "--db", str(db), "--workers", "2",
            "--log-dir", str(tmp_path / "logs"))
    with referee(*args, cwd=tmp_path) as first:
        wait_for_games(first, db, 4)
        first.send_signal(signal.SIGTERM)
        _, err = first.communicate(timeout=60)
    assert first.returncode == 130, err.decode()
    assert f"{count_games(db)} games are stored in {db}" in err.decode()
    # Each worker stopped its unit in good order (Trio delivered the interrupt), rather
    # than having its event loop torn down under its tasks.
    assert "abandoned" not in err.decode() and "Exception ignored" not in err.decode(), err
    deadline = time.monotonic() + 10
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marked_processes(marker) == []  # every worker stopped its bots


def test_frames_carry_a_pickle_each() -> None:
    stream = io.BytesIO(frame({"a": 1}) + frame([2, 3]) + frame("x")[:-1])
    assert pickle.loads(read_frame(stream) or b"") == {"a": 1}
    assert pickle.loads(read_frame(stream) or b"") == [2, 3]
    assert read_frame(stream) is None  # a frame cut short is the end


@pytest.mark.parametrize(("workers", "sandbox"), [(None, False), (None, True), (2, True)],
                         ids=["in-process", "in-process-sandbox", "workers-sandbox"])
async def test_the_probe_reports_its_sandbox_from_each_executor(
    tmp_path: Path, workers: int | None, sandbox: bool
) -> None:
    """Worker processes received a copy of the bot's command without its sandbox, and
    ran sandboxed bots unsandboxed."""
    config = load_league(probe_league(tmp_path, sandbox=sandbox))
    executor = LocalExecutor(1) if workers is None else PoolExecutor(workers)
    with ResultStore(tmp_path / "r.sqlite") as store:
        assert await run_league(config, store, executor=executor,
                                log_dir=tmp_path / "logs") == 2
    check_reports(probe_reports(tmp_path / "logs"), tmp_path / "secret.txt",
                  sandboxed=sandbox)
