"""The attacks of a hostile bot on the sandbox and on the containment of unsandboxed
bots (tests/hostile_bots/intruder.py), each held.

The intruder answers out of range (an ``illegal`` forfeit) when its attack succeeds, and
plays on when it fails. Each bot command carries a token of its own, which its processes
(forks included) keep in their command lines: the tests find every process of the run
by it, from the host.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import taki_protocol
from jsonout import strict_json
from processes import processes_naming

from referee.cli.main import main
from referee.core.specs import BotCommand, Sandbox
from referee.shell.sandbox import containment, sandbox_env

REPO = Path(__file__).resolve().parents[2]
INTRUDER = REPO / "tests" / "hostile_bots" / "intruder.py"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'} 1"
REFEREE = Path(sys.executable).with_name("taki-referee")

SYS_ADD_KEY, SYS_KEYCTL = 248, 250
KEYCTL_INVALIDATE, KEY_SPEC_SESSION_KEYRING = 21, -3


@pytest.fixture(autouse=True)
def bwrap_installed() -> None:
    if not Path("/usr/bin/bwrap").exists():
        pytest.fail("bwrap is needed for these tests: ./tasks test installs bubblewrap")


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def token() -> Iterator[str]:
    """The token of the test's intruder; no process that names it outlives the test."""
    mark = f"intruder-{uuid.uuid4().hex}"
    yield mark
    for pid in processes_naming(mark):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def intruder(token: str, mode: str, *args: str) -> str:
    # The token goes first: the bot reads MODE and ARGS after it.
    return f"intruder=python {INTRUDER} {mode} {' '.join(args)} {token}"


def match(capsys: pytest.CaptureFixture[str], bots: list[str], *options: str,
          games: int = 1) -> tuple[list[Any], str]:
    code = main(["match", *bots, "--games", str(games), "--seed", "1", "--json",
                 "--move-ms", "5000", "--log-dir", "logs", *options])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return [g["players"] for g in strict_json(captured.out)["games"]], captured.err


def forfeits(games: list[Any]) -> list[Any]:
    return [next(p["forfeit"] for p in players if p["bot"] == "intruder")
            for players in games]


def intruder_log(here: Path) -> str:
    return "".join(p.read_text() for p in sorted((here / "logs").glob("*intruder*.log")))


def none_alive_within(token: str, seconds: float) -> list[int]:
    """The processes naming ``token`` still alive after up to ``seconds`` (polling
    /proc)."""
    deadline = time.monotonic() + seconds
    while (alive := processes_naming(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


SANDBOX = [pytest.param(["--sandbox"], id="sandboxed"), pytest.param([], id="contained")]


@pytest.mark.parametrize("options", [
    pytest.param(["--sandbox"], id="sandboxed"),
    pytest.param(["--sandbox", "--memory-mb", "256", "--pids", "64"], id="sandboxed-limited"),
    pytest.param([], id="contained"),
])
def test_a_bot_cannot_ptrace_its_pid_1_and_nothing_of_it_outlives_the_match(
    here: Path, capsys: pytest.CaptureFixture[str], token: str, options: list[str]
) -> None:
    games, _ = match(capsys, [intruder(token, "ptrace"), RANDOM], *options)
    assert forfeits(games) == [None]
    assert "cannot attach to pid 1: Operation not permitted" in intruder_log(here)
    assert none_alive_within(token, 2) == []


@pytest.fixture
def session_key() -> Iterator[str]:
    """A user key in the session keyring of the test's process (the referee's)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    description = f"taki-test-{uuid.uuid4().hex}"
    payload = b"the referee's secret"
    key = libc.syscall(SYS_ADD_KEY, b"user", description.encode(), payload, len(payload),
                       KEY_SPEC_SESSION_KEYRING)
    if key < 0:
        pytest.fail(f"cannot add a key: {os.strerror(ctypes.get_errno())}")
    yield description
    libc.syscall(SYS_KEYCTL, KEYCTL_INVALIDATE, key)


@pytest.mark.parametrize("options", SANDBOX)
def test_the_referees_session_keyring_is_out_of_reach(
    here: Path, token: str, session_key: str, options: list[str],
) -> None:
    # A referee of its own, started by this thread, which holds the key: the threads of
    # a process that started before a session keyring was made keep the one they had.
    done = subprocess.run(
        [str(REFEREE), "match", intruder(token, "keyring", session_key), RANDOM, "--games",
         "1", "--seed", "1", "--json", "--move-ms", "5000", "--log-dir", "logs", *options],
        cwd=here, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    games = [g["players"] for g in strict_json(done.stdout)["games"]]
    assert forfeits(games) == [None], intruder_log(here)
    assert "cannot find the key: Operation not permitted" in intruder_log(here)


def test_a_sandboxed_bot_gets_none_of_the_referees_environment(
    here: Path, capsys: pytest.CaptureFixture[str], token: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TAKI_TEST_SECRET", "the referee's secret")
    games, _ = match(capsys, [intruder(token, "env", "TAKI_TEST_SECRET"), RANDOM],
                     "--sandbox")
    assert forfeits(games) == [None]
    said = intruder_log(here)
    # Only what it needs: PATH, LANG, HOME, the SDK's PYTHONPATH (and PWD, from bwrap).
    assert "not found (['HOME', 'LANG', 'PATH', 'PWD', 'PYTHONPATH'])" in said
    # An unsandboxed bot has the referee's environment, as documented (docs/sandbox.md).
    games, _ = match(capsys, [intruder(token, "env", "TAKI_TEST_SECRET"), RANDOM])
    assert forfeits(games)[0]["reason"] == "illegal"


@pytest.mark.parametrize("options", SANDBOX)
def test_no_nested_namespaces_and_no_tmpfs_past_the_bound(
    here: Path, capsys: pytest.CaptureFixture[str], token: str, options: list[str]
) -> None:
    games, _ = match(capsys, [intruder(token, "userns", "96"), RANDOM], *options)
    assert forfeits(games) == [None]
    assert "cannot unshare: Operation not permitted" in intruder_log(here)


@pytest.mark.parametrize("options", [
    pytest.param(["--sandbox"], id="sandboxed"),
    pytest.param(["--sandbox", "--memory-mb", "256", "--pids", "64"], id="sandboxed-limited"),
])
def test_a_sandboxed_bot_can_write_to_its_tmp_only(
    here: Path, capsys: pytest.CaptureFixture[str], token: str, options: list[str]
) -> None:
    dirs = ["/etc", "/usr", "/usr/lib", "/", "/home", "/root", "/var", "/opt", "/dev",
            str(here)]
    games, _ = match(capsys, [intruder(token, "write", *dirs), RANDOM], *options)
    log = intruder_log(here)
    assert forfeits(games) == [None], log
    for folder in dirs:
        assert f"cannot make {os.path.join(folder, 'intruder-file')}:" in log
        assert f"cannot make {os.path.join(folder, 'intruder-folder')}:" in log
    assert "scratch space: wrote 1 MiB to /tmp/scratch" in log
    assert "shared memory: a semaphore works" in log
    assert not (here / "intruder-file").exists()


@pytest.mark.parametrize("options", SANDBOX)
def test_proc_1_cmdline_shows_no_bwrap_options_and_no_unseen_path(
    here: Path, capsys: pytest.CaptureFixture[str], token: str, options: list[str]
) -> None:
    games, _ = match(capsys, [intruder(token, "cmdline"), RANDOM], *options)
    assert forfeits(games) == [None], intruder_log(here)
    assert "/proc/1/cmdline: ['/usr/bin/bwrap', '--args'," in intruder_log(here)


def test_log_names_give_away_no_seed_and_logs_and_replays_are_private(
    here: Path, capsys: pytest.CaptureFixture[str], token: str
) -> None:
    # Unsandboxed, in the referee's working directory, where the logs and the replays
    # are: the bot lists them and tries every number in a file name as the master seed.
    seed = 4_815_162_342
    code = main(["match", intruder(token, "logs"), RANDOM, "--games", "4", "--seed",
                 str(seed), "--json", "--move-ms", "5000", "--log-dir", "logs",
                 "--replay-dir", "replays/mine"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    games = [g["players"] for g in strict_json(captured.out)["games"]]
    assert forfeits(games) == [None] * 4, intruder_log(here)
    assert intruder_log(here).count("rebuilt nothing") == 2  # a process per rotation
    files = [*(here / "logs").iterdir(), *(here / "replays" / "mine").iterdir()]
    assert len(files) == 8  # two bots' logs, per rotation; four replays
    assert all(str(seed) not in f.name for f in files)
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    for directory in (here / "logs", here / "replays", here / "replays" / "mine"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    # A log is still found through the results: each seat names its own.
    assert all(Path(p["log"]).exists() for players in games for p in players)


def test_a_contained_bot_that_kills_its_guard_dies_with_a_killed_referee(
    here: Path, token: str
) -> None:
    # The bot kills its guard if it can see it, starts a child in a session of its own,
    # and thinks; then the referee dies by SIGKILL, with no chance to clean up.
    args = ["match", intruder(token, "guardkill"), RANDOM, "--games", "1",
            "--move-ms", "60000", "--log-dir", "logs"]
    with subprocess.Popen([str(REFEREE), *args], cwd=here, start_new_session=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as referee:
        try:
            deadline = time.monotonic() + 30
            while "session of its own" not in (
                    intruder_log(here) if (here / "logs").exists() else ""):
                assert referee.poll() is None, referee.stderr.read() if referee.stderr else ""
                assert time.monotonic() < deadline, "the intruder did not start its child"
                time.sleep(0.05)
            assert len(processes_naming(token)) >= 2  # the bot and its child
            os.kill(referee.pid, signal.SIGKILL)  # the referee alone, not its group
            referee.wait()
            assert none_alive_within(token, 2) == []
            # In a pid namespace of its own, it could not even see its guard.
            assert re.search(r"killed 0 guards", intruder_log(here))
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(referee.pid, signal.SIGKILL)


def test_without_bwrap_the_first_line_says_bots_are_not_contained(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{here}:{Path(sys.executable).parent}")  # no bwrap on it
    containment.cache_clear()
    try:
        games, err = match(capsys, [RANDOM.replace("python", "a=python", 1), RANDOM])
    finally:
        containment.cache_clear()
    assert err.splitlines()[0] == (
        "processes: not contained (no bwrap: install the Debian package bubblewrap): a bot"
        " can outlive the referee and read what the referee's user can")
    assert all(p["forfeit"] is None for players in games for p in players)


def test_a_sandboxed_bot_gets_path_lang_home_the_sdk_and_its_own_env(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/nowhere/bin:/usr/local/bin")
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    monkeypatch.setenv("TAKI_TEST_SECRET", "x")
    command = BotCommand(("bot",), env={"TEAM": "red", "HOME": "/tmp/home"},
                         sandbox=Sandbox())
    env = sandbox_env(command, ["/usr", "/work"])
    sdk = Path(taki_protocol.__file__).resolve().parent.parent
    assert env == {"PATH": "/usr/bin:/usr/local/bin", "LANG": "de_DE.UTF-8",
                   "HOME": "/tmp/home", "PYTHONPATH": str(sdk), "TEAM": "red"}
