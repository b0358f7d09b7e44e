"""Process checks shared by the tests that start bots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psutil


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
