"""Process lifetimes, as an organizer meets them: no bot, sandbox or worker dies because
a thread of the referee went idle (Trio forks from worker threads that end after 10 s
idle, and a parent-death signal fires when the forking thread ends), and nothing the
referee or a league's coordinator started outlives it when it is killed with SIGKILL
at any moment.

The referee runs as a command, alone in its process (no other thread activity), with
concurrency 1. A run's processes carry a marker unique to the test, in their
environment and in the bots' command lines (:func:`processes.run_processes`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from jsonout import strict_json
from processes import MARKER_VARIABLE, kill_all, run_processes, thinker

# Every test here starts referees, workers and bots as processes and kills some of them.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
RANDOM = REPO / "sample_bots" / "random_bot.py"
REFEREE = Path(sys.executable).with_name("taki-referee")
#: How long after the referee's death nothing of its run may be left.
AFTERLIFE_S = 2.0


@pytest.fixture(autouse=True)
def bwrap_installed() -> None:
    if not Path("/usr/bin/bwrap").exists():
        pytest.fail("bwrap is needed for the sandbox tests: ./tasks test installs bubblewrap")


@contextlib.contextmanager
def referee(args: list[str], cwd: Path, marker: str) -> Iterator[subprocess.Popen[bytes]]:
    """The referee command, marked; whatever of its run is left is killed afterwards."""
    proc = subprocess.Popen(
        [str(REFEREE), *args], cwd=cwd, start_new_session=True,
        env={**os.environ, MARKER_VARIABLE: marker},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    with proc:
        try:
            yield proc
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            kill_all(run_processes(marker))


def wait_for(what: str, condition: Callable[[], bool], proc: subprocess.Popen[bytes],
             timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            pytest.fail(f"the referee ended before {what}: {err}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout_s:g} s")
        time.sleep(0.005)


def kill_and_check_nothing_is_left(proc: subprocess.Popen[bytes], marker: str) -> None:
    """SIGKILL the referee alone (not its group), then poll /proc: no process of its run
    may be alive :data:`AFTERLIFE_S` later."""
    os.kill(proc.pid, signal.SIGKILL)
    killed = time.monotonic()
    proc.wait()
    left = run_processes(marker)
    while left and time.monotonic() < killed + AFTERLIFE_S:
        time.sleep(0.02)
        left = run_processes(marker)
    survivors = []
    for p in left:
        with contextlib.suppress(psutil.Error):
            survivors.append(" ".join(p.cmdline())[:200])
    assert survivors == [], f"alive {AFTERLIFE_S:g} s after the referee's SIGKILL"


def bot_processes(marker: str) -> list[psutil.Process]:
    """The run's processes that run a bot's program (or bwrap around one)."""
    found = []
    for p in run_processes(marker):
        with contextlib.suppress(psutil.Error):
            if marker in p.cmdline():
                found.append(p)
    return found


# ---------------------------------------------------------------- a bot that thinks


def test_a_sandboxed_bot_thinking_15_s_of_its_30_s_plays_its_game(tmp_path: Path) -> None:
    """bwrap's --die-with-parent killed it after 10 s: the thread that forked it had
    gone idle."""
    marker = uuid.uuid4().hex
    args = ["match", f"slow={thinker(15, 3, 1, 'any', marker)}", f"random=python {RANDOM} 1",
            "--games", "1", "--seed", "4", "--move-ms", "30000", "--sandbox", "--json",
            "--log-dir", "logs"]
    with referee(args, tmp_path, marker) as proc:
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode(errors="replace")
    (game,) = strict_json(out)["games"]
    assert [p["forfeit"] for p in game["players"]] == [None, None], game
    assert game["end"] in ("win", "limit"), game  # played out on the board
    log = "".join(p.read_text() for p in (tmp_path / "logs").glob("*slow*.log"))
    assert "thinks: 15 s on decision 3" in log


# ----------------------------------------------------- a referee killed with SIGKILL


@pytest.mark.parametrize("sandbox", [False, True], ids=["plain", "sandbox"])
@pytest.mark.parametrize("moment", ["bot start", "mid-game"])
def test_nothing_outlives_a_killed_referee(tmp_path: Path, sandbox: bool, moment: str) -> None:
    marker = uuid.uuid4().hex
    bot = thinker(60, 1, 0, "any", marker)  # thinks a minute on every decision
    args = ["match", f"a={bot}", f"b={bot}", "--games", "2", "--move-ms", "120000",
            "--log-dir", "logs", *(["--sandbox"] if sandbox else [])]
    with referee(args, tmp_path, marker) as proc:
        if moment == "bot start":
            wait_for("bot process", lambda: bool(bot_processes(marker)), proc)
        else:
            def thinking() -> bool:
                logs = (tmp_path / "logs").glob("*.log")
                return any("thinks:" in p.read_text() for p in logs)

            wait_for("bot thinking", thinking, proc)
        kill_and_check_nothing_is_left(proc, marker)


# ------------------------------------------------- leagues in worker processes


def league_file(tmp_path: Path, name: str, workers: int, bots: list[str],
                sandbox: bool = True) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f"[league]\ndeals = 1\nseed = 3\nconcurrency = 1\nworkers = {workers}\n"
        f"sandbox = {'true' if sandbox else 'false'}\n"
        "[time]\nmove_ms = 30000\n"
        + "".join(f'[[bots]]\nname = "bot{i}"\ncommand = "{command}"\n'
                  for i, command in enumerate(bots)))
    return path


def test_leagues_with_units_of_a_minute_complete_in_workers(tmp_path: Path) -> None:
    """A worker got SIGTERM (its prctl parent-death signal) when the coordinator's
    thread that started it had been idle for 10 s, and a sandboxed bot SIGKILL when the
    worker's had; both leagues run at once, each unit of rotation 0 a minute long."""
    marker = uuid.uuid4().hex
    # bot0 thinks 12 s on each of its first 5 decisions of a process, in seat 0 only.
    bots = [thinker(12, 1, 5, "0", marker), f"python {RANDOM} 1 {marker}"]
    runs = []
    with contextlib.ExitStack() as stack:
        for workers in (1, 2):
            path = league_file(tmp_path, f"w{workers}", workers, bots)
            args = ["league", str(path), "--db", str(tmp_path / f"w{workers}.sqlite"),
                    "--json", "--log-dir", str(tmp_path / f"logs{workers}")]
            runs.append((workers, stack.enter_context(referee(args, tmp_path, marker))))
        started = time.monotonic()
        for workers, proc in runs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, f"workers = {workers}: {err.decode(errors='replace')}"
            assert strict_json(out)["games"] == 2
    assert time.monotonic() - started >= 60
    for workers in (1, 2):
        logs = "".join(p.read_text() for p in (tmp_path / f"logs{workers}").iterdir())
        assert logs.count("thinks: 12 s") == 5, logs
        assert "forfeit" not in logs


def worker_processes(marker: str) -> list[psutil.Process]:
    found = []
    for p in run_processes(marker):
        with contextlib.suppress(psutil.Error):
            if "referee.league.pool_worker" in p.cmdline():
                found.append(p)
    return found


def worker_bots(marker: str) -> list[psutil.Process]:
    """Bot processes (or bwrap around them) started by a worker, not by the coordinator's
    bot check."""
    found = []
    for p in bot_processes(marker):
        with contextlib.suppress(psutil.Error):
            if any("referee.league.pool_worker" in a.cmdline() for a in p.parents()):
                found.append(p)
    return found


@pytest.mark.parametrize("sandbox", [False, True], ids=["plain", "sandbox"])
@pytest.mark.parametrize("moment", [
    "worker start", "worker start + 0.3 s", "worker start + 1 s", "bot start", "mid-unit",
])
def test_nothing_outlives_a_killed_coordinator(
    tmp_path: Path, sandbox: bool, moment: str
) -> None:
    marker = uuid.uuid4().hex
    bot = thinker(60, 1, 0, "any", marker)
    path = league_file(tmp_path, "league", 2, [bot, bot], sandbox)
    args = ["league", str(path), "--db", str(tmp_path / "league.sqlite"), "--no-bot-check"]
    with referee(args, tmp_path, marker) as proc:
        if moment.startswith("worker start"):
            wait_for("worker process", lambda: bool(worker_processes(marker)), proc)
            time.sleep(float(moment.split("+ ")[1].removesuffix(" s")) if "+" in moment else 0)
        else:
            wait_for("bot in a worker", lambda: bool(worker_bots(marker)), proc)
            if moment == "mid-unit":
                time.sleep(1.5)  # the bots are thinking
        kill_and_check_nothing_is_left(proc, marker)
