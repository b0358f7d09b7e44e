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
