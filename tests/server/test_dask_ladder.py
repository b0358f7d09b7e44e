"""docs/competition.md's "Running the games on more machines", walked end to end: a Dask
scheduler and two workers started with the ``dask`` command, the competition file's
``dask = "HOST:PORT"``, ``taki-referee serve``, two bots submitted with ``taki-referee
submit``: the ladder's games land in the server's database, and every bot process runs
under one of the two workers, both of which play."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from served import RANDOM_BOT, bot_folder

try:
    import distributed  # noqa: F401
except ImportError as exc:  # pragma: no cover - only without the dask extra
    raise ImportError(f"the Dask ladder test needs dask[distributed] ({exc}); ./tasks test"
                      " installs it") from None

BIN = Path(sys.executable).parent
TAKI = str(BIN / "taki-referee")
DASK = str(BIN / "dask")


@contextlib.contextmanager
def started(command: list[str], log: Path, cwd: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process (in a session of its own, its output in ``log``), ended with its
    whole process group."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_for(pattern: str, log: Path, proc: subprocess.Popen[bytes], seconds: float = 60
             ) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace"))
        if found:
            return found.group(1)
        assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
        time.sleep(0.1)
    raise AssertionError(f"{pattern!r} not seen in {log}:\n" + log.read_text()[-2000:])


def games(db: Path) -> int:
    con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    finally:
        con.close()


def worker_of(pid: int, workers: dict[int, str]) -> str | None:
    """Which of the ``workers`` (by pid of its ``dask worker`` command) ``pid`` runs
    under, if any."""
    with contextlib.suppress(psutil.NoSuchProcess):
        for parent in psutil.Process(pid).parents():
            if parent.pid in workers:
                return workers[parent.pid]
    return None


@pytest.mark.slow
def test_the_ladder_plays_on_two_dask_workers_as_the_docs_say(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    with started([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                  "--no-dashboard"], tmp_path / "scheduler.log", tmp_path) as scheduler:
        address = wait_for(r"Scheduler at:\s+tcp://(\S+)", tmp_path / "scheduler.log",
                           scheduler)
        with contextlib.ExitStack() as stack:
            procs = {name: stack.enter_context(started(
                [DASK, "worker", f"tcp://{address}", "--nthreads", "1", "--name", name,
                 "--no-dashboard"], tmp_path / f"{name}.log", tmp_path))
                for name in ("w1", "w2")}
            for name, proc in procs.items():
                wait_for(r"(Registered to)", tmp_path / f"{name}.log", proc)
            workers = {proc.pid: name for name, proc in procs.items()}
            (tmp_path / "competition.toml").write_text(
                f'[competition]\nname = "spread"\n\n[ladder]\ndask = "{address}"\n'
                "concurrency = 2\nplacement_games = 2\nseed = 7\n\n"
                "[time]\nmove_ms = 1000\nstartup_ms = 15000\n")
            tokens = {}
            for who in ("alice", "bob"):
                out = subprocess.run([TAKI, "participants", "add", who, "--db",
                                      "competition.sqlite"], cwd=tmp_path, check=True,
                                     capture_output=True, text=True).stdout
                tokens[who] = out.strip().splitlines()[-1]
            server = stack.enter_context(started(
                [TAKI, "serve", "competition.toml", "--db", "competition.sqlite", "--listen",
                 "127.0.0.1:0"], tmp_path / "serve.log", tmp_path))
            url = wait_for(r"serving on (http://\S+)", tmp_path / "serve.log", server)
            for who in ("alice", "bob"):
                script = f"spread_{who}_{mark}.py"
                folder = bot_folder(tmp_path / who, f"{who}-bot",
                                    command=f"python {script} 1",
                                    extra={script: RANDOM_BOT.read_text()})
                subprocess.run([TAKI, "submit", url, str(folder), "--token", tokens[who],
                                "--timeout", "240"], check=True, capture_output=True,
                               timeout=300)
            played_on: set[str] = set()
            seen_bots = 0
            deadline = time.monotonic() + 300
            db = tmp_path / "competition.sqlite"
            while (games(db) < 8 or len(played_on) < 2) and time.monotonic() < deadline:
                for proc in psutil.process_iter(["cmdline"]):
                    if any(mark in word for word in proc.info["cmdline"] or ()) and \
                            proc.info["cmdline"][0] != TAKI:
                        worker = worker_of(proc.pid, workers)
                        if worker is None and proc.is_running() and worker_of(
                                proc.pid, {server.pid: "server"}):
                            raise AssertionError("a bot of the ladder ran in the server")
                        if worker is not None:
                            played_on.add(worker)
                            seen_bots += 1
                time.sleep(0.05)
            assert seen_bots, "no bot process was seen"
            assert games(db) >= 8
            assert played_on == {"w1", "w2"}
