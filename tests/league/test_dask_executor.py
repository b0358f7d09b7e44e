"""Leagues on a Dask cluster: a worker killed mid-league, the coordinator killed and
restarted, bots that workers cannot start, and results delivered twice."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import psutil
import pytest
import trio
from dask_cluster import local_cluster
from jsonout import strict_json
from probing import check_reports, probe_league, probe_reports
from processes import (
    deal_memory_command,
    kill_all,
    league_deal,
    pids_with_a_deal_twice,
    run_processes,
    thinker,
)

try:
    from distributed import Client
except ImportError as exc:  # pragma: no cover - only without the dask extra
    raise ImportError(
        f"the Dask league tests need the optional dependency dask[distributed] ({exc});"
        " install it with: pip install -e '.[test,dask]' (./tasks test does)"
    ) from None

from referee.config.errors import SettingsError
from referee.config.settings import LeagueConfig, load_league
from referee.core.replay import Replay, verify
from referee.core.schedule import WorkUnit
from referee.league.dask_executor import (
    INSTALL_HINT,
    ClusterError,
    DaskExecutor,
    _Attempt,
    _Coordinator,
    deliver,
    scheduler_address,
)
from referee.league.dask_worker import UnitResult, UnitTask, on_this_worker, play_unit_task
from referee.league.runner import (
    LeagueJob,
    league_size,
    pending_units,
    record_of,
    run_league,
    settings_for,
)
from referee.league.store import ResultStore

REPO = Path(__file__).resolve().parents[2]
GREEDY = f"python {REPO / 'sample_bots' / 'greedy_bot.py'}"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'}"
REFEREE = Path(sys.executable).with_name("taki-referee")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The scheduler address of a 2-worker LocalCluster (one thread per worker)."""
    log = tmp_path_factory.mktemp("cluster") / "cluster.log"
    with local_cluster(log, "n_workers=2, threads_per_worker=1, processes=True") as (
            address, _):
        yield address


@pytest.fixture
def client(cluster: str) -> Iterator[Client]:
    with Client(cluster, set_as_default=False) as client:
        # A worker killed by an earlier test is restarted by its nanny.
        client.wait_for_workers(2, timeout=30)
        yield client


def league_file(tmp_path: Path, *, deals: int, marker: str = "", bots: str = "",
                league: str = "") -> Path:
    env = f'env = {{ TAKI_TEST_MARKER = "{marker}" }}' if marker else ""
    bots = bots or f"""\
[[bots]]
name = "greedy"
command = "{GREEDY}"
{env}

[[bots]]
name = "random1"
command = "{RANDOM} 1"
{env}

[[bots]]
name = "random2"
command = "{RANDOM} 2"
{env}
"""
    path = tmp_path / "league.toml"
    path.write_text(f"""\
[league]
table_size = 2
deals = {deals}
seed = 7
concurrency = 2
replay_dir = "replays"
{league}

[time]
move_ms = 1000
bank_ms = 10000
increment_ms = 100

{bots}
""")
    return path


def count_games(db: Path) -> int:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


def stored_ids(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return [row[0] for row in con.execute("SELECT game_id FROM games")]


def check_exactly_once(db: Path, expected: set[str], seats: int = 2) -> None:
    ids = stored_ids(db)
    assert len(ids) == len(set(ids)) == len(expected)
    assert set(ids) == expected
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert con.execute("SELECT COUNT(*) FROM seats").fetchone() == (seats * len(ids),)
        assert con.execute(
            "SELECT COUNT(*) FROM seats WHERE forfeit_reason IS NOT NULL"
        ).fetchone() == (0,)


def marked_processes(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if proc.status() != psutil.STATUS_ZOMBIE and (
                proc.environ().get("TAKI_TEST_MARKER") == marker
            ):
                found.append(proc)
    return found


# ------------------------------------------------------------- a worker dies


@pytest.mark.slow
async def test_a_worker_killed_mid_league(
    tmp_path: Path, cluster: str, client: Client
) -> None:
    marker = uuid.uuid4().hex
    config = load_league(league_file(tmp_path, deals=8, marker=marker))
    total = league_size(config)
    assert total == 48
    pids: dict[str, int] = await trio.to_thread.run_sync(client.run, os.getpid)
    victim_pid = sorted(pids.items())[0][1]
    db = tmp_path / "dask.sqlite"
    killed_at: list[int] = []

    async def kill_a_worker() -> None:
        while count_games(db) < 6:
            await trio.sleep(0.01)
        killed_at.append(count_games(db))
        os.kill(victim_pid, signal.SIGKILL)

    with ResultStore(db) as store:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(kill_a_worker)
            played = await run_league(
                config, store, log_dir=tmp_path / "logs",
                executor=DaskExecutor(cluster),
            )
        assert played == store.game_count() == total
        games = list(store.games())
    assert killed_at and killed_at[0] < total
    assert not psutil.pid_exists(victim_pid) or (
        psutil.Process(victim_pid).status() == psutil.STATUS_ZOMBIE
    )

    # The same games as a local run, each stored once.
    local_db = tmp_path / "local.sqlite"
    with ResultStore(local_db) as store:
        assert await run_league(config, store, log_dir=tmp_path / "local-logs") == total
    check_exactly_once(db, set(stored_ids(local_db)))
    assert set(stored_ids(local_db)) == {
        g.game_id for unit in pending_units(config, set()) for g in unit.games
    }

    # The coordinator wrote every replay into the league's replay_dir, and each one
    # re-plays to the stored result.
    replays = tmp_path / "replays"
    for game in games:
        assert game.replay is not None
        path = Path(game.replay)
        assert path.parent == replays
        result = verify(Replay.load(path))
        assert result.places == tuple(s.place for s in game.seats)
    assert list((tmp_path / "logs").glob("greedy_random1_deals0-*_rot0-greedy.log"))

    # The bots of the dead worker saw their input close and exited.
    deadline = time.monotonic() + 10
    while marked_processes(marker) and time.monotonic() < deadline:
        await trio.sleep(0.05)
    assert marked_processes(marker) == []


# ------------------------------------------------------- the coordinator dies


@contextlib.contextmanager
def referee(*args: str, cwd: Path) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [str(REFEREE), *args], cwd=cwd, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    with proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.mark.slow
def test_killed_coordinator_resumes(
    tmp_path: Path, cluster: str, client: Client
) -> None:
    path = league_file(tmp_path, deals=6)
    config = load_league(path)
    total = league_size(config)
    db = tmp_path / "league.sqlite"
    args = ("league", str(path), "--db", str(db), "--log-dir", str(tmp_path / "logs"),
            "--json", "--dask", cluster)

    with referee(*args, cwd=tmp_path) as first:
        deadline = time.monotonic() + 60
        while count_games(db) < 4:
            assert first.poll() is None, first.stderr.read() if first.stderr else ""
            assert time.monotonic() < deadline, "the league did not record any game"
            time.sleep(0.01)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert 4 <= count_games(db) < total

    with referee(*args, cwd=tmp_path) as second:
        out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err.decode()
    assert strict_json(out)["games"] == total
    check_exactly_once(db, {g.game_id for unit in pending_units(config, set()) for g in unit.games})


# --------------------------------------------------- bots a worker cannot start


@pytest.mark.slow
def test_a_bot_missing_on_every_worker_stops_the_league(
    tmp_path: Path, cluster: str, client: Client
) -> None:
    path = league_file(tmp_path, deals=2, bots=f"""\
[[bots]]
name = "greedy"
command = "{GREEDY}"

[[bots]]
name = "ghost"
command = "no-such-bot-binary --fast"
""")
    db = tmp_path / "r.sqlite"
    result = subprocess.run(
        [str(REFEREE), "league", str(path), "--db", str(db), "--log-dir",
         str(tmp_path / "logs"), "--dask", cluster],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )
    assert result.returncode == 2, result.stderr
    message = " ".join(result.stderr.split())
    assert "cannot start bot 'ghost' (no-such-bot-binary --fast) on workers" in message
    assert "every worker must be able to run every bot command" in message
    for worker in client.nthreads():
        assert worker in message
    assert "Traceback" not in result.stderr
    # Never a forfeit: the games of the ghost are not played at all.
    assert count_games(db) == 0


@pytest.mark.slow
async def test_a_bot_missing_on_one_worker_is_played_on_another(
    tmp_path: Path, cluster: str, client: Client
) -> None:
    # Only the worker whose working directory holds bin/bot.py can start the bot; on
    # the other, the interpreter starts but exits before its handshake, which the
    # worker's bot check reports as its own failure, never as a forfeit of the bot.
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    random_bot = REPO / "sample_bots" / "random_bot.py"
    (home / "bin" / "bot.py").write_text(
        f"import runpy, sys\nsys.argv = [{str(random_bot)!r}, '3']\n"
        f"runpy.run_path({str(random_bot)!r}, run_name='__main__')\n"
    )
    # Many small units, so that the idle worker steals queued ones: a block restricted
    # to the other workers must never be handed back to the worker that failed its bot.
    path = league_file(tmp_path, deals=12, league="deals_per_process = 1", bots=f"""\
[[bots]]
name = "greedy"
command = "{GREEDY}"

[[bots]]
name = "random"
command = "{RANDOM} 1"

[[bots]]
name = "local-only"
command = "python bin/bot.py"
""")
    config = load_league(path)
    workers = sorted(client.nthreads())
    able, unable = workers
    cwds: dict[str, str] = client.run(os.getcwd)
    client.run(os.chdir, str(home), workers=[able])
    in_flight = 4
    executor = DaskExecutor(cluster, in_flight=in_flight)
    try:
        with ResultStore(tmp_path / "r.sqlite") as store:
            played = await run_league(config, store, log_dir=tmp_path / "logs",
                                      executor=executor)
    finally:
        client.run(os.chdir, cwds[able], workers=[able])
    assert played == league_size(config) == 72
    # Never a forfeit: every game of the bot was played where it could start.
    check_exactly_once(tmp_path / "r.sqlite",
                       {g.game_id for unit in pending_units(config, set()) for g in unit.games})
    # At least one block went to the worker without the bot first; it was re-submitted.
    assert executor.failures
    assert {f.worker for f in executor.failures} == {unable}
    assert {f.bot for f in executor.failures} == {"local-only"}
    assert all("exited with status 2 before its handshake" in f.problem
               and "can't open file" in f.problem for f in executor.failures)
    # Once the first failure is known, no block with the bot goes to that worker again:
    # only the blocks already in flight then can fail there.
    assert len(executor.failures) <= in_flight


@pytest.mark.slow
async def test_no_bot_process_on_a_worker_plays_two_games_of_one_deal(
    tmp_path: Path, cluster: str
) -> None:
    log = tmp_path / "pids.log"
    config = load_league(league_file(tmp_path, deals=3, bots=f"""\
[[bots]]
name = "memory1"
command = "{deal_memory_command(log)}"

[[bots]]
name = "memory2"
command = "{deal_memory_command(log)}"

[[bots]]
name = "memory3"
command = "{deal_memory_command(log)}"
"""))
    with ResultStore(tmp_path / "r.sqlite") as store:
        played = await run_league(config, store, log_dir=None, executor=DaskExecutor(cluster))
    assert played == league_size(config) == 18
    # The bot check on each worker logs no game; every game is logged by both its seats.
    assert len(log.read_text().splitlines()) == 2 * 18
    assert pids_with_a_deal_twice(log, league_deal) == {}


@pytest.mark.slow
async def test_retries_are_bounded(
    tmp_path: Path, cluster: str, client: Client
) -> None:
    path = league_file(tmp_path, deals=1, bots=f"""\
[[bots]]
name = "greedy"
command = "{GREEDY}"

[[bots]]
name = "ghost"
command = "no-such-bot-binary"
""")
    config = load_league(path)
    executor = DaskExecutor(cluster, max_attempts=1)
    with ResultStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(ClusterError, match=r"unit greedy,ghost/deals0-0/rot\d could not be"
                           r" played in 1 attempts: cannot start bot 'ghost'"
                           r" \(no-such-bot-binary\) on worker tcp://"):
            await run_league(config, store, log_dir=None, executor=executor)
        assert store.game_count() == 0
    assert len(executor.failures) == 1


# -------------------------------------------------------- delivered twice


def unit_task(config: LeagueConfig, unit: WorkUnit, run: str = "") -> UnitTask:
    """The task of one unit of work, as the coordinator would submit it."""
    specs = {b.name: b for b in config.bots}
    return UnitTask(
        unit=unit.name,
        games=unit.games,
        bots=tuple(specs[name] for name in unit.games[0].seats),
        settings=settings_for(config, None),
        replays=True,
        logs=True,
        python=sys.executable,
        run=run,
    )


def test_a_result_delivered_twice_is_stored_once(tmp_path: Path) -> None:
    config = load_league(league_file(tmp_path, deals=2))
    settings = settings_for(config, tmp_path / "logs")
    unit = next(pending_units(config, set(), deals=2))
    specs = {b.name: b for b in config.bots}
    task = unit_task(config, unit)
    result = play_unit_task(task)
    assert result.failure is None
    assert [p.outcome.game.game_id for p in result.games] == [g.game_id for g in unit.games]
    assert all(p.replay is not None for p in result.games)
    assert {name for name, _ in result.logs} == {
        "greedy_random1_deals0-1_rot0-greedy.log", "greedy_random1_deals0-1_rot0-random1.log"
    }
    recorded: list[str] = []
    with ResultStore(tmp_path / "r.sqlite") as store:

        def record(outcome: Any) -> bool:
            new = store.record(record_of(outcome))
            if new:
                recorded.append(outcome.game.game_id)
            return new

        job = LeagueJob(settings, specs, record, store.has_game)
        assert deliver(job, result) == 2
        replays = sorted((tmp_path / "replays").iterdir())
        first = [p.read_text() for p in replays]
        assert deliver(job, result) == 0
        assert store.game_count() == 2
        # Even when the store is asked directly, a duplicate is refused.
        assert not job.record(result.games[0].outcome)
        stored = list(store.games())
    assert recorded == [g.game_id for g in unit.games]
    assert [p.read_text() for p in sorted((tmp_path / "replays").iterdir())] == first
    assert {g.replay for g in stored} == {str(p) for p in replays}
    assert (tmp_path / "logs" / "greedy_random1_deals0-1_rot0-greedy.log").exists()


def test_a_worker_checks_each_bot_once_per_run(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    counting = tmp_path / "counting_bot.py"
    random_bot = REPO / "sample_bots" / "random_bot.py"
    counting.write_text(
        f"import runpy, sys\nwith open({str(starts)!r}, 'a') as f:\n    f.write('start\\n')\n"
        f"sys.argv = [{str(random_bot)!r}, '4']\n"
        f"runpy.run_path({str(random_bot)!r}, run_name='__main__')\n"
    )
    config = load_league(league_file(tmp_path, deals=2, bots=f"""\
[[bots]]
name = "greedy"
command = "{GREEDY}"

[[bots]]
name = "counting"
command = "python {counting}"
"""))
    first, second = pending_units(config, set(), deals=2)

    def played(unit: WorkUnit, run: str) -> int:
        result = play_unit_task(unit_task(config, unit, run))
        assert result.failure is None
        assert len(result.games) == 2
        return len(starts.read_text().splitlines())

    run = uuid.uuid4().hex
    assert played(first, run) == 2  # the check, then the block
    assert played(second, run) == 3  # checked already in this run: the block only
    assert played(first, uuid.uuid4().hex) == 5  # a new run checks again


def test_a_worker_that_cannot_start_a_bot_forfeits_nothing(tmp_path: Path) -> None:
    config = load_league(league_file(tmp_path, deals=1, bots=f"""\
[[bots]]
name = "greedy"
command = "{GREEDY}"

[[bots]]
name = "typo"
command = "python {tmp_path / 'no_such_bot.py'}"
"""))
    unit = next(pending_units(config, set()))
    run = uuid.uuid4().hex
    for _ in range(2):  # a failure is not remembered: the bot is checked again
        result = play_unit_task(unit_task(config, unit, run))
        assert result.games == ()
        assert result.failure is not None
        assert result.failure.worker == "local"
        assert result.failure.bot == "typo"
        assert result.failure.command.endswith("no_such_bot.py")
        assert result.failure.problem.startswith("exited with status 2 before its handshake")
        assert "can't open file" in result.failure.problem


async def test_a_task_stranded_on_departed_workers_is_resubmitted(tmp_path: Path) -> None:
    # A block restricted to workers that all left would wait for them forever.
    config = load_league(league_file(tmp_path, deals=1))

    class Future:
        cancelled = False

        def cancel(self) -> None:
            self.cancelled = True

    class FakeClient:
        def nthreads(self) -> dict[str, int]:
            return {"tcp://w3:1": 1}

    job = LeagueJob(settings_for(config, None), {b.name: b for b in config.bots},
                    lambda _: True, lambda _: False)
    coordinator = _Coordinator(DaskExecutor("127.0.0.1:1"), FakeClient(), job)
    unit = next(pending_units(config, set()))
    games = list(unit.games)
    stranded = _Attempt(unit.name, games, allowed=["tcp://w1:1", "tcp://w2:1"])
    waiting = _Attempt(unit.name, games, allowed=["tcp://w3:1"])
    free = _Attempt(unit.name, games)
    futures = [Future(), Future(), Future()]
    coordinator.in_flight = dict(zip(futures, [stranded, waiting, free], strict=True))
    await coordinator._reroute_stranded()
    assert [f.cancelled for f in futures] == [True, False, False]
    assert coordinator.retry == [stranded]
    assert list(coordinator.in_flight.values()) == [waiting, free]


class FakeFuture:
    """A Dask future that the test finishes."""

    def __init__(self, block: str) -> None:
        self.block = block
        self.status = "pending"
        self.callbacks: list[Callable[[FakeFuture], None]] = []

    def add_done_callback(self, callback: Callable[[FakeFuture], None]) -> None:
        self.callbacks.append(callback)

    def finish(self, status: str) -> None:
        self.status = status
        for callback in self.callbacks:
            callback(self)

    def cancel(self) -> None:
        self.finish("cancelled")

    def result(self) -> UnitResult:
        return UnitResult(self.block, "tcp://w2:1", ())


class BusyClient:
    """A cluster that keeps finishing tasks, one every 50 ms, while worker w1 leaves as
    soon as a task restricted to it is submitted (and w2 joins)."""

    status = "running"

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery
        self.workers = ["tcp://w1:1", "tcp://w3:1"]
        #: (block, the workers it may run on) of each submission, in order.
        self.submitted: list[tuple[str, list[str] | None]] = []
        self.futures: list[FakeFuture] = []

    def nthreads(self) -> dict[str, int]:
        return dict.fromkeys(self.workers, 1)

    def submit(self, fn: Any, task: UnitTask, *, workers: list[str] | None,
               **options: Any) -> FakeFuture:
        future = FakeFuture(task.unit)
        self.submitted.append((task.unit, workers))
        self.futures.append(future)
        if workers == ["tcp://w1:1"]:
            self.workers = ["tcp://w2:1", "tcp://w3:1"]
        else:
            self.nursery.start_soon(self._finish_soon, future)
        return future

    async def _finish_soon(self, future: FakeFuture) -> None:
        await trio.sleep(0.05)
        future.finish("finished")


async def test_a_stranded_task_is_resubmitted_while_other_tasks_keep_finishing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check for stranded tasks has a timer of its own: it does not wait for the
    cluster to fall quiet."""
    monkeypatch.setattr("referee.league.dask_executor.POLL_S", 0.2)
    config = load_league(league_file(tmp_path, deals=1))
    job = LeagueJob(settings_for(config, None), {b.name: b for b in config.bots},
                    lambda _: True, lambda _: False)
    unit = next(pending_units(config, set()))
    games = list(unit.games)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            client = BusyClient(nursery)
            coordinator = _Coordinator(DaskExecutor("127.0.0.1:1", in_flight=2), client, job)
            # A block whose bot w3 could not start: it may run on w1 only, which leaves.
            coordinator.retry = [_Attempt("stranded", games, failed_workers={"tcp://w3:1"})]
            await coordinator.run(iter([unit] * 40))
    assert len(client.submitted) == 42
    sent = [(i, workers) for i, (block, workers) in enumerate(client.submitted)
            if block == "stranded"]
    assert [workers for _, workers in sent] == [["tcp://w1:1"], ["tcp://w2:1"]]
    assert client.futures[0].status == "cancelled"
    # One 50 ms task at a time runs beside the stranded one: its re-submission after
    # 0.2 s comes long before the 40 other tasks (2 s or more) are done.
    assert sent[1][0] < len(client.submitted) - 10, sent


def test_bots_travel_as_they_are(tmp_path: Path) -> None:
    import pickle

    config = load_league(league_file(tmp_path, deals=1, bots=f"""\
[[bots]]
name = "a"
command = "{GREEDY}"
env = {{ X = "1" }}
limits = {{ cpu_seconds = 60 }}
sandbox = true

[[bots]]
name = "b"
command = "/bin/true"
sandbox = true
sandbox_bind = ["."]
"""))
    assert config.bots[1].local_command().sandbox is not None
    for spec in config.bots:
        assert pickle.loads(pickle.dumps(spec)) == spec
        assert on_this_worker(spec, sys.executable) == spec
    a = config.bots[0].local_command()
    assert a.sandbox is not None and a.env == {"X": "1"}
    # ``python`` is the coordinator's interpreter there, the worker's here.
    moved = on_this_worker(config.bots[0], "/elsewhere/python")
    assert moved.local_command().argv[0] == sys.executable
    assert attrs.evolve(moved.local_command(), argv=a.argv) == a
    assert pickle.loads(pickle.dumps(settings_for(config, None))) == settings_for(config, None)


# ------------------------------------------------------- settings and command


def test_executor_setting(tmp_path: Path) -> None:
    config = load_league(league_file(tmp_path, deals=1, league='executor = "dask://h.example:8786"'))
    assert config.executor == "dask://h.example:8786"
    assert scheduler_address(config.executor) == "tcp://h.example:8786"
    assert scheduler_address("10.0.0.5:8786") == "tcp://10.0.0.5:8786"
    assert scheduler_address("tls://h:1") == "tls://h:1"
    assert load_league(league_file(tmp_path, deals=1)).executor == "local"
    for value, problem in [
        ('"dask://h"', 'must be "local" or "dask://HOST:PORT"'),
        ('"tcp://h:1"', 'must be "local" or "dask://HOST:PORT"'),
        ("5", "not 5"),
        ('"dask://h:70000"', "port 70000 is not between 1 and 65535"),
    ]:
        path = league_file(tmp_path, deals=1, league=f"executor = {value}")
        with pytest.raises(SettingsError) as info:
            load_league(path)
        assert str(info.value).startswith(f"{path}:7: [league] executor: ")
        assert problem in str(info.value)


def test_dask_option_without_dask(tmp_path: Path) -> None:
    path = league_file(tmp_path, deals=1)
    code = (
        "import sys; sys.modules['distributed'] = None; sys.modules['dask'] = None\n"
        "from referee.cli.main import main\n"
        f"sys.exit(main(['league', {str(path)!r}, '--db', {str(tmp_path / 'r.sqlite')!r},"
        " '--dask', 'localhost:8786']))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stderr
    assert INSTALL_HINT in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
    # The league file's executor needs dask too.
    path = league_file(tmp_path, deals=1, league='executor = "dask://localhost:8786"')
    code = code.replace(", '--dask', 'localhost:8786'", "")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stderr
    assert INSTALL_HINT in " ".join(result.stderr.split())


# ------------------------------------------------------ the bot value on a worker


@pytest.mark.slow
async def test_the_probe_reports_its_sandbox_from_a_dask_worker(
    tmp_path: Path, cluster: str, client: Client
) -> None:
    """Dask workers received a copy of the bot's command without its sandbox, and ran
    sandboxed bots unsandboxed."""
    config = load_league(probe_league(tmp_path, sandbox=True))
    with ResultStore(tmp_path / "r.sqlite") as store:
        played = await run_league(config, store, log_dir=tmp_path / "logs",
                                  executor=DaskExecutor(cluster))
    assert played == 2
    check_reports(probe_reports(tmp_path / "logs"), tmp_path / "secret.txt", sandboxed=True)


@pytest.mark.slow
async def test_sandboxed_units_of_a_minute_complete_on_dask(
    tmp_path: Path, cluster: str, client: Client
) -> None:
    """A sandboxed bot got SIGKILL (bwrap's --die-with-parent) when the Trio thread of
    the Dask worker that started it had been idle for 10 s."""
    path = league_file(tmp_path, deals=1, league="sandbox = true", bots=f"""\
[[bots]]
name = "slow"
command = "{thinker(12, 1, 5, '0')}"

[[bots]]
name = "random"
command = "{RANDOM} 1"
""")
    text = path.read_text().replace("move_ms = 1000", "move_ms = 30000")
    path.write_text(text.replace("bank_ms = 10000\nincrement_ms = 100\n", ""))
    started = time.monotonic()
    with ResultStore(tmp_path / "r.sqlite") as store:
        played = await run_league(load_league(path), store, log_dir=tmp_path / "logs",
                                  executor=DaskExecutor(cluster))
    assert played == 2
    assert time.monotonic() - started >= 60
    check_exactly_once(tmp_path / "r.sqlite", set(stored_ids(tmp_path / "r.sqlite")))
    logs = "".join(p.read_text() for p in (tmp_path / "logs").iterdir())
    assert logs.count("thinks: 12 s") == 5, logs


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [False, True], ids=["plain", "sandbox"])
def test_a_killed_coordinator_stops_its_units_on_the_workers(
    tmp_path: Path, cluster: str, client: Client, sandbox: bool
) -> None:
    """Dask cannot stop a running task: the task sees that its client left the cluster
    and stops its unit and its bots, which played on for minutes."""
    marker = uuid.uuid4().hex
    bot = thinker(60, 1, 0, "any", marker)  # thinks a minute on every decision
    path = league_file(tmp_path, deals=1, league=f"sandbox = {str(sandbox).lower()}",
                       bots=f'[[bots]]\nname = "a"\ncommand = "{bot}"\n\n'
                            f'[[bots]]\nname = "b"\ncommand = "{bot}"\n')
    path.write_text(path.read_text().replace("move_ms = 1000", "move_ms = 120000"))
    args = ("league", str(path), "--db", str(tmp_path / "r.sqlite"), "--dask", cluster)
    with referee(*args, cwd=tmp_path) as proc:
        deadline = time.monotonic() + 60
        while not run_processes(marker):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "no bot started on a worker"
            time.sleep(0.02)
        time.sleep(1.5)  # the bots are thinking
        os.kill(proc.pid, signal.SIGKILL)
        killed = time.monotonic()
        proc.wait()
    try:
        while run_processes(marker) and time.monotonic() < killed + 2:
            time.sleep(0.02)
        assert run_processes(marker) == []
    finally:
        kill_all(run_processes(marker))


# ------------------------------------------------------- an async unit source


@pytest.mark.slow
async def test_units_from_an_async_source_play_on_the_cluster(
    tmp_path: Path, cluster: str, client: Client
) -> None:
    """A ladder hands its units out as the coordinator asks for them, and may wait
    before each one: results keep being settled meanwhile, and every unit is played."""
    config = load_league(league_file(tmp_path, deals=2))
    units = list(pending_units(config, set()))
    asked: list[int] = []

    async def source() -> AsyncIterator[WorkUnit]:
        for unit in units:
            asked.append(len(asked))
            await trio.sleep(0.05)
            yield unit

    with ResultStore(tmp_path / "r.sqlite") as store:
        job = LeagueJob(settings_for(config, None), {b.name: b for b in config.bots},
                        record=lambda outcome: store.record(record_of(outcome)),
                        is_stored=store.has_game)
        await DaskExecutor(cluster, in_flight=2).play(job, source())
        assert store.finished_ids() == {g.game_id for unit in units for g in unit.games}
    assert len(asked) == len(units)


@pytest.mark.slow
async def test_a_failing_unit_source_stops_the_coordinator_with_its_error(
    tmp_path: Path, cluster: str, client: Client
) -> None:
    config = load_league(league_file(tmp_path, deals=1))

    async def source() -> AsyncIterator[WorkUnit]:
        raise ValueError("no table to play")
        yield  # pragma: no cover

    job = LeagueJob(settings_for(config, None), {b.name: b for b in config.bots},
                    record=lambda outcome: True, is_stored=lambda game_id: False)
    with pytest.raises(ValueError, match="no table to play"):
        await DaskExecutor(cluster).play(job, source())
