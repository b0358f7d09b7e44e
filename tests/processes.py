"""Process checks shared by the tests that start bots."""

from __future__ import annotations

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
