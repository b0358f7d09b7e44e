"""The sandbox (bubblewrap) and the enforced limits, tried by hostile bots.

Each probe bot answers out of range (an ``illegal`` forfeit) when it manages what the
sandbox must stop. Every probe is also run without ``--sandbox``, where it succeeds: so
the tests prove the sandbox, not the bot.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonout import strict_json
from processes import processes_naming

from referee.cli.main import main
from referee.core.specs import HardLimits
from referee.shell import limits as limits_module
from referee.shell.limits import LimitBackend

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "tests" / "hostile_bots" / "sandbox_probe.py"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'} 1"
REFEREE = Path(sys.executable).with_name("taki-referee")


@pytest.fixture(autouse=True)
def bwrap_installed() -> None:
    if not Path("/usr/bin/bwrap").exists():
        pytest.fail("bwrap is needed for the sandbox tests: ./tasks test installs bubblewrap")


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The referee's working directory for the test, with a results database, a replay
    and a file of its own in it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results.sqlite").write_text("the results")
    (tmp_path / "replays").mkdir()
    (tmp_path / "replays" / "game1.json").write_text('{"seed": 1}')
    (tmp_path / "secret.txt").write_text("the referee's own file")
    return tmp_path


def probe(mode: str, *args: str) -> str:
    return f"probe=python {PROBE} {mode} {' '.join(args)}"


def match(capsys: pytest.CaptureFixture[str], bots: list[str], *options: str,
          games: int = 1) -> tuple[list[Any], str]:
    """The games of a match (their ``players``), and the referee's stderr."""
    code = main(["match", *bots, "--games", str(games), "--seed", "1", "--json",
                 "--move-ms", "3000", "--log-dir", "logs", *options])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return [g["players"] for g in strict_json(captured.out)["games"]], captured.err


def probe_forfeits(games: list[Any]) -> list[Any]:
    return [next(p["forfeit"] for p in players if p["bot"] == "probe") for players in games]


def probe_log(here: Path) -> str:
    return "".join(p.read_text() for p in sorted((here / "logs").glob("*probe*.log")))


@pytest.mark.parametrize("sandbox", [True, False])
def test_the_referees_files_are_out_of_reach(
    here: Path, capsys: pytest.CaptureFixture[str], sandbox: bool
) -> None:
    paths = [f"={here / name}" for name in ("results.sqlite", "replays/game1.json",
                                            "secret.txt")]
    games, err = match(capsys, [probe("read", *paths), RANDOM],
                       *(["--sandbox"] if sandbox else []))
    if sandbox:
        assert "sandbox: bubblewrap" in err
        assert probe_forfeits(games) == [None]
        assert probe_log(here).count("cannot read") == 3
    else:
        assert probe_forfeits(games)[0]["reason"] == "illegal"


@pytest.mark.parametrize("sandbox", [True, False])
def test_no_network_not_even_the_hosts_loopback(
    here: Path, capsys: pytest.CaptureFixture[str], sandbox: bool
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        games, _ = match(capsys, [probe("connect", str(port)), RANDOM],
                         *(["--sandbox"] if sandbox else []))
    assert (probe_forfeits(games)[0] is None) == sandbox


@pytest.mark.parametrize("sandbox", [True, False])
def test_tmp_is_new_for_every_bot_process(
    here: Path, capsys: pytest.CaptureFixture[str], sandbox: bool
) -> None:
    marker = Path(f"/tmp/sandbox-probe-{uuid.uuid4().hex}")  # this test's own
    try:
        # Two games: one per seat rotation, each played by a process of its own.
        games, _ = match(capsys, [probe("tmp", f"={marker}"), RANDOM],
                         *(["--sandbox"] if sandbox else []), games=2)
    finally:
        found_outside = marker.exists()
        marker.unlink(missing_ok=True)
    forfeits = probe_forfeits(games)
    if sandbox:
        assert forfeits == [None, None] and not found_outside
    else:
        assert forfeits[0] is None and forfeits[1]["reason"] == "illegal"


@pytest.mark.parametrize("how", ["sandboxed", "contained", "uncontained"])
def test_proc_shows_neither_referee_nor_guard(
    here: Path, capsys: pytest.CaptureFixture[str], how: str, request: pytest.FixtureRequest
) -> None:
    if how == "uncontained":
        request.getfixturevalue("uncontained")
    games, _ = match(capsys, [probe("proc"), RANDOM],
                     *(["--sandbox"] if how == "sandboxed" else []))
    assert (probe_forfeits(games)[0] is None) == (how != "uncontained")


def test_memory_over_the_limit_is_a_crash_that_names_the_limit(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start = time.monotonic()
    games, err = match(capsys, [probe("alloc", "2048"), RANDOM], "--sandbox",
                       "--memory-mb", "256")
    (forfeit,) = probe_forfeits(games)
    assert forfeit["reason"] == "crash", forfeit
    assert "the bot exceeded its memory limit of 256 MiB" in forfeit["detail"]
    assert time.monotonic() - start < 30
    assert "limits: cgroup" in err
    # Without the limit the same bot allocates what the limit forbids (more than 256 MiB;
    # not 2 GiB, which a busy host may not have to spare) and plays on.
    games, _ = match(capsys, [probe("alloc", "320"), RANDOM], "--sandbox")
    assert probe_forfeits(games) == [None]
    games, _ = match(capsys, [probe("alloc", "320"), RANDOM], "--sandbox", "--memory-mb", "256")
    assert probe_forfeits(games)[0]["reason"] == "crash"


def test_forks_over_the_process_limit_fail_inside_and_the_game_goes_on(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    games, _ = match(capsys, [probe("fork", "1000"), RANDOM], "--sandbox", "--pids", "64")
    assert probe_forfeits(games) == [None]
    log = probe_log(here)
    made, failed = (int(w) for w in log.split("forked ")[1].split(" forks failed")[0]
                    .split(", "))
    assert made < 64 and made + failed == 1000


def test_the_prlimit_fallback_limits_memory_and_refuses_a_cpu_share(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAKI_REFEREE_LIMITS", "prlimit")
    monkeypatch.setattr(limits_module, "_IN_FORCE", None)
    games, err = match(capsys, [probe("alloc", "2048"), RANDOM], "--memory-mb", "256")
    assert "limits: prlimit" in err
    (forfeit,) = probe_forfeits(games)
    assert forfeit["reason"] == "crash"  # MemoryError inside the bot
    assert "MemoryError" in probe_log(here)
    assert main(["match", probe("tmp"), RANDOM, "--cpu-percent", "50"]) == 2
    assert "--cpu-percent needs cgroups" in capsys.readouterr().err


def test_a_missing_bwrap_is_one_clear_error_before_any_game(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(here))  # no bwrap on it
    assert main(["match", probe("tmp"), RANDOM, "--sandbox", "--log-dir", "logs"]) == 2
    err = capsys.readouterr().err
    assert "install the Debian package bubblewrap" in err and err.count("\n") == 1
    assert not (here / "logs").exists()  # no bot was started


def test_the_sample_bots_play_sandboxed_unchanged(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bots = [f"greedy=python {REPO / 'sample_bots' / 'greedy_bot.py'}", RANDOM.replace(
        "python", "random=python", 1), f"js=node {REPO / 'sample_bots' / 'js' / 'bot.js'}",
        f"c={REPO / 'sample_bots' / 'c' / 'taki_bot'}"]
    games, _ = match(capsys, bots, "--sandbox", "--memory-mb", "512", games=4)
    assert all(p["forfeit"] is None for players in games for p in players)


def test_a_bot_kept_under_tmp_is_still_visible(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The sandbox's private /tmp must not hide a bot (or a checkout) that lives in /tmp.
    bot = here / "bots" / "random_bot.py"
    bot.parent.mkdir()
    bot.write_text((REPO / "sample_bots" / "random_bot.py").read_text())
    assert str(bot).startswith("/tmp/")
    games, _ = match(capsys, [f"probe=python {bot} 3", RANDOM], "--sandbox")
    assert probe_forfeits(games) == [None]


@contextlib.contextmanager
def referee(args: list[str], cwd: Path) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([str(REFEREE), *args], cwd=cwd, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with proc:
        try:
            yield proc
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_nothing_of_a_sandboxed_bot_outlives_a_killed_referee(here: Path) -> None:
    # The bot kills what it can see and starts children in sessions of their own; then
    # the referee dies by SIGKILL, with no chance to clean up.
    # The probe's command line (which its children keep) names the token; a sandboxed
    # bot has no environment of the referee's to mark it with.
    marker = f"escape-{uuid.uuid4().hex}"
    args = ["match", probe("escape", marker), RANDOM, "--sandbox", "--games", "1",
            "--move-ms", "60000", "--log-dir", "logs"]
    with referee(args, here) as proc:
        deadline = time.monotonic() + 30
        while "three children" not in probe_log(here) if (here / "logs").exists() else True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the probe did not start its children"
            time.sleep(0.05)
        assert len(processes_naming(marker)) >= 4  # at least the bot and its three children
        os.kill(proc.pid, signal.SIGKILL)  # the referee alone, not its group
        proc.wait()
        deadline = time.monotonic() + 2
        while processes_naming(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_naming(marker) == []


def test_cgroup_v2_limits_are_written_where_the_kernel_reads_them(tmp_path: Path) -> None:
    # This host has cgroup v1; the v2 backend's files, on a directory that stands in for
    # /sys/fs/cgroup.
    backend = LimitBackend("cgroup v2", (tmp_path,))
    handle = backend.prepare(HardLimits(memory_mb=256, pids=64, cpu_percent=50))
    assert handle is not None
    (d,) = handle.dirs
    assert d.parent == tmp_path / "taki-referee"
    assert (d / "memory.max").read_text() == str(256 << 20)
    assert (d / "memory.swap.max").read_text() == "0"
    assert (d / "pids.max").read_text() == "64"
    assert (d / "cpu.max").read_text() == "50000 100000"
    assert not handle.memory_killed()
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert handle.memory_killed()
    for name in ("memory.max", "memory.swap.max", "pids.max", "cpu.max", "memory.events"):
        (d / name).unlink()
    handle.remove()
    assert not d.exists()
