"""Bounds that hold without being asked for: a sandboxed bot's processes, and the
cgroups of a referee killed before it could remove them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jsonout import strict_json

from referee.cli.main import main
from referee.shell.limits import PARENT, SWEEP_AGE_S, limit_backend, sweep
from referee.shell.sandbox import SANDBOX_PIDS

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "tests" / "hostile_bots" / "sandbox_probe.py"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'} 1"


def test_a_sandboxed_bot_without_a_process_limit_gets_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["match", f"probe=python {PROBE} fork 1000", RANDOM, "--sandbox", "--games",
                 "1", "--seed", "1", "--json", "--move-ms", "20000", "--log-dir", "logs"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    (game,) = strict_json(captured.out)["games"]
    assert all(p["forfeit"] is None for p in game["players"])
    log = "".join(p.read_text() for p in (tmp_path / "logs").glob("*probe*.log"))
    made, failed = (int(w) for w in log.split("forked ")[1].split(" forks failed")[0]
                    .split(", "))
    assert made < SANDBOX_PIDS and made + failed == 1000


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_the_cgroups_of_a_dead_referee_are_swept(tmp_path: Path) -> None:
    dead, alive = _dead_pid(), os.getpid()
    names = [f"{dead}-0", f"{dead}-1", f"probe-{dead}", f"{alive}-0", "other"]
    for name in names:
        (tmp_path / name).mkdir()
    old = time.time() - SWEEP_AGE_S - 1
    for name in names[:-2]:
        os.utime(tmp_path / name, (old, old))
    (tmp_path / f"{dead}-2").mkdir()  # just made: perhaps a new referee's, with that pid
    removed = sweep(tmp_path)
    assert sorted(p.name for p in removed) == sorted(names[:3])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"{alive}-0", "other", f"{dead}-2"])


@pytest.mark.skipif(os.geteuid() != 0, reason="cgroup v1 needs root")
def test_a_killed_referees_cgroups_go_at_the_next_start(tmp_path: Path) -> None:
    backend = limit_backend()
    if not backend.name.startswith("cgroup"):
        pytest.skip(f"no cgroups here ({backend.name})")
    referee = Path(sys.executable).with_name("taki-referee")
    proc = subprocess.Popen([str(referee), "match", f"python {PROBE} escape x", RANDOM,
                             "--sandbox", "--pids", "64", "--games", "1", "--move-ms",
                             "60000", "--log-dir", "logs"], cwd=tmp_path,
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    parents = [root / PARENT for root in backend.roots]
    deadline = time.monotonic() + 30
    while not [p for parent in parents for p in parent.glob(f"{proc.pid}-*")]:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(2.5)  # the guards kill the bots: their cgroups are empty, and stay
    left = [p for parent in parents for p in parent.glob(f"{proc.pid}-*")]
    assert left
    sweep_now = time.time() + SWEEP_AGE_S + 1
    for parent in parents:
        sweep(parent, now=sweep_now)
    assert not [p for parent in parents for p in parent.glob(f"{proc.pid}-*")]
