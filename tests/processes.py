"""Process checks shared by the tests that start bots."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil


def unmeasured_env() -> dict[str, str]:
    """This environment without coverage's variables, for a fresh interpreter that tells
    what an import loads: under tests/tiers.py coverage would start in it, and load
    modules of its own (sqlite3)."""
    return {name: value for name, value in os.environ.items()
            if name not in ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG")}


def live_children(*, zombies: bool) -> list[psutil.Process]:
    """Descendants of the test process that still exist; zombies count when ``zombies``."""
    out = []
    for child in psutil.Process().children(recursive=True):
        try:
            status = child.status()
        except psutil.NoSuchProcess:
            continue
        if zombies or status != psutil.STATUS_ZOMBIE:
            out.append(child)
    return out


def gone(pid: int) -> bool:
    """A process that no longer runs. A zombie counts: once its parent (the bot) is dead,
    reaping it is the job of init, not of the referee."""
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


#: The test bot that thinks (sleeps) on some of its decisions.
THINKS_BOT = Path(__file__).resolve().parent / "hostile_bots" / "thinks.py"


def thinker(seconds: float, first: int, times: int, seat: str, marker: str = "") -> str:
    """A bot command: a random bot that thinks ``seconds`` before its decisions number
    ``first`` to ``first + times - 1`` (all from ``first`` with ``times`` 0), in every
    seat (``seat`` "any") or that one; ``marker`` on its command line."""
    return f"python {THINKS_BOT} {seconds:g} {first} {times} {seat} {marker}".rstrip()


#: The test bot that logs ``PID GAME_ID`` at every game start.
DEAL_MEMORY_BOT = Path(__file__).resolve().parent / "hostile_bots" / "deal_memory.py"


def deal_memory_command(log: Path) -> str:
    """A bot command line that plays at random and logs its pid with every game id."""
    return f"python {DEAL_MEMORY_BOT} {log}"


def pids_with_a_deal_twice(log: Path, deal_of: Callable[[str], str]) -> dict[str, list[str]]:
    """The processes of ``log`` (written by the deal-memory bot) that played two games of
    one deal, with those games; ``deal_of(game_id)`` names a game's deal."""
    games: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        pid, game_id = line.split(" ", 1)
        games.setdefault(pid, []).append(game_id)
    return {pid: ids for pid, ids in games.items()
            if len({deal_of(i) for i in ids}) < len(ids)}


def league_deal(game_id: str) -> str:
    """The deal of a league or SPRT game id (``TABLE/dealN/rotR``): its duplicate block."""
    return game_id.rsplit("/", 1)[0]


def _stat_fields(pid: int | str) -> list[bytes]:
    """The fields of ``/proc/PID/stat`` after the command: state, ppid, pgrp, session..."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


def _nspid(pid: int | str) -> int | None:
    """The pid that the process ``pid`` has in its own, innermost pid namespace."""
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"NSpid:"):
                return int(line.split()[-1])
    return None


def host_pid(inner: int, session: int) -> int:
    """The pid, as the tests see it, of the process that calls itself ``inner`` in the bot
    started as ``session`` (``BotProcess.pid``). A contained bot runs in a pid namespace
    of its own (referee.shell.sandbox), under bwrap, whose processes are the session's
    leader and the namespace's pid 1: its processes know themselves by the pids of that
    namespace. An uncontained bot's ``inner`` is its pid already."""
    ours = os.readlink("/proc/self/ns/pid")
    theirs = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError):
            fields = _stat_fields(pid)
            if int(fields[3]) == session or int(fields[2]) == session:
                theirs.add(os.readlink(f"/proc/{pid}/ns/pid"))
    theirs.discard(ours)
    if not theirs:
        return inner
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/ns/pid") in theirs and _nspid(pid) == inner:
                return int(pid)
    raise LookupError(f"no process of the bot {session} is {inner} in its pid namespace")


def processes_naming(token: str) -> list[int]:
    """The live processes (zombies are dead) whose command line holds ``token``."""
    found = []
    needle = token.encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError):
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if needle not in f.read():
                    continue
            if _stat_fields(pid)[0] not in (b"Z", b"X"):
                found.append(int(pid))
    return found


#: The environment variable that marks the processes of one run in the tests that kill a
#: referee (its value is unique to the test).
MARKER_VARIABLE = "TAKI_TEST_MARKER"


def run_processes(marker: str) -> list[psutil.Process]:
    """The live processes (zombies count as dead) of a run: those whose environment holds
    ``TAKI_TEST_MARKER=marker`` (the referee and all it starts inherit it) or whose command
    line names ``marker`` (the tests put it in the bots' commands, for what runs in a
    sandbox, whose environment may be cleared)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if marker in proc.cmdline() or proc.environ().get(MARKER_VARIABLE) == marker:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def kill_all(processes: list[psutil.Process]) -> None:
    """SIGKILL each of ``processes`` that still runs (a test's cleanup after a failure)."""
    for proc in processes:
        try:
            proc.kill()
        except psutil.Error:
            continue


@contextlib.contextmanager
def busy_machine(count: int) -> Iterator[None]:
    """``count`` busy loops beside the test, each in a session of its own (other users'
    jobs): the machine's load, not the bots'."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                              start_new_session=True) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGKILL)
        for proc in procs:
            proc.wait()
