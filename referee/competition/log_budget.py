"""The ladder's bot logs, kept within a budget: at most ``per_bot`` bytes for each bot
version and ``total`` bytes in all, the oldest files evicted first.

Each bot process's log is capped as it is written (``referee.shell``); this bounds
their sum, which grows with every game. A log file names the bot it belongs to last
(``<unit>-<bot>.log``, ``<unit>-<bot>.<n>.log``, the bot's name made a safe file name);
a file of no known bot counts only towards the total. Blocking (it lists and removes
files): the server calls it in a thread.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import attrs

from referee.match import safe_filename

__all__ = ["LogBudget", "LogUsage", "trim_logs"]


@attrs.frozen
class LogBudget:
    per_bot: int
    total: int


@attrs.frozen
class LogUsage:
    """The logs after a trim: their bytes and files, and the files evicted by it."""

    bytes: int
    files: int
    evicted: int


def _owner(name: str, bots: dict[str, str]) -> str | None:
    """The bot ``name`` belongs to: the longest of the safe names (``bots``' keys) it
    ends with after a "-", before ``.log`` or ``.<n>.log`` ("x-ab_1" is not "b_1"'s).
    A dictionary look-up per "-" of the name: the cost of a file does not grow with
    the field."""
    if not name.endswith(".log"):
        return None
    stems = [name[:-4]]
    head, dot, number = stems[0].rpartition(".")
    if dot and number.isdecimal():
        stems.append(head)
    best: str | None = None
    for stem in stems:
        at = stem.find("-")
        while at >= 0:
            suffix = stem[at + 1:]
            if suffix in bots and (best is None or len(suffix) > len(best)):
                best = suffix
            at = stem.find("-", at + 1)
    return None if best is None else bots[best]


def trim_logs(folder: Path, bots: Iterable[str], budget: LogBudget) -> LogUsage:
    """Evict the oldest logs of ``folder`` until each of ``bots`` is within
    ``budget.per_bot`` and the folder within ``budget.total``."""
    if not folder.is_dir():
        return LogUsage(0, 0, 0)
    owners = {safe_filename(b): b for b in bots}
    files = []
    for path in folder.iterdir():
        try:
            info = path.stat()
        except FileNotFoundError:
            continue
        files.append((info.st_mtime, path, info.st_size, _owner(path.name, owners)))
    files.sort()  # oldest first
    by_bot: defaultdict[str | None, int] = defaultdict(int)
    for _, _, size, owner in files:
        by_bot[owner] += size
    total = sum(by_bot.values())
    evicted = 0
    kept = []
    for entry in files:
        _, path, size, owner = entry
        if (owner is not None and by_bot[owner] > budget.per_bot) or total > budget.total:
            path.unlink(missing_ok=True)
            by_bot[owner] -= size
            total -= size
            evicted += 1
        else:
            kept.append(entry)
    return LogUsage(total, len(kept), evicted)
