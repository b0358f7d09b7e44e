"""A bot's stderr log of a ladder game, and the game's replay, found on disk.

A ladder plays each seat rotation of a meeting in fresh bot processes (one unit of
work, ``<table>/deals<first>-<last>/rot<r>``), and each process writes its stderr to
``<unit>-<bot>.log`` in the competition's ``logs`` folder (a restarted process to
``.1``, ``.2``, ...). A page shows the end of each, bounded, never more.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Final

import attrs

from referee.core import Replay, short_detail
from referee.league import Meeting
from referee.match import safe_filename
from referee.present import locate_replay, render_html

__all__ = ["LOG_BYTES", "LogPart", "game_logs", "log_download", "public_replay",
           "public_viewer"]

#: The most of a log a page shows (its end).
LOG_BYTES: Final = 64 * 1024
#: The most log files of one bot in one game (its restarts) a page shows ...
MAX_FILES: Final = 4
#: ... of the first this many starts (a start that wrote nothing left no file).
MAX_STARTS: Final = 32

_BLOCK = re.compile(r"^(?P<table>.+)/deal(?P<deal>\d+)$")
_ROTATION = re.compile(r"/rot(?P<rot>\d+)$")


@attrs.frozen
class LogPart:
    name: str
    text: str
    #: Bytes left out at its start.
    cut: int


def unit_name(meetings: list[Meeting], block: str, game_id: str) -> str | None:
    """The unit of work that played a ladder game, or None (not a ladder's game)."""
    found, rotation = _BLOCK.match(block), _ROTATION.search(game_id)
    if found is None or rotation is None:
        return None
    table, deal = tuple(found["table"].split(",")), int(found["deal"])
    for meeting in meetings:
        if meeting.bots == table and meeting.first_deal <= deal < meeting.first_deal \
                + meeting.deals:
            last = meeting.first_deal + meeting.deals - 1
            return f"{found['table']}/deals{meeting.first_deal}-{last}/rot{rotation['rot']}"
    return None


def _tail(path: Path) -> LogPart:
    with path.open("rb") as file:
        size = file.seek(0, 2)
        start = max(0, size - LOG_BYTES)
        file.seek(start)
        data = file.read(LOG_BYTES)
    return LogPart(path.name, data.decode("utf-8", "replace"), start)


def _log_files(log_dir: Path, meetings: list[Meeting], block: str, game_id: str,
               bot: str) -> list[Path]:
    unit = unit_name(meetings, block, game_id)
    if unit is None:
        return []
    stem = f"{safe_filename(unit)}-{safe_filename(bot)}"
    # A start whose bot wrote nothing left no file (the ladder's ``empty_logs``): the
    # next start's log may still be there.
    paths = (log_dir / f"{stem}{f'.{start}' if start else ''}.log" for start in range(MAX_STARTS))
    return list(itertools.islice((path for path in paths if path.is_file()), MAX_FILES))


def game_logs(log_dir: Path, meetings: list[Meeting], block: str, game_id: str,
              bot: str) -> list[LogPart]:
    """The ends of ``bot``'s stderr logs of a game (blocking)."""
    return [_tail(path) for path in _log_files(log_dir, meetings, block, game_id, bot)]


def log_download(log_dir: Path, meetings: list[Meeting], block: str, game_id: str,
                 bot: str) -> bytes:
    """``bot``'s whole stderr logs of a game, one after the other, each after a line
    that names it (blocking; each log is bounded by the referee's stderr cap)."""
    out = bytearray()
    for path in _log_files(log_dir, meetings, block, game_id, bot):
        out += f"==> {path.name} <==\n".encode()
        out += path.read_bytes()
        if out and not out.endswith(b"\n"):
            out += b"\n"
    return bytes(out)


def public_replay(stored: str, db: Path) -> Replay:
    """A stored replay with every forfeit's detail cut to its first line (a crash's
    detail holds the bot's stderr, which is its owner's alone). Blocking; ReplayError
    or OSError when the replay cannot be read."""
    replay = Replay.load(locate_replay(stored, db))
    log = [{**entry, "detail": short_detail(str(entry["detail"]))}
           if "forfeit" in entry and entry.get("detail") else entry for entry in replay.log]
    return attrs.evolve(replay, log=log)


def public_viewer(stored: str, db: Path) -> str:
    """The replay viewer's page of a stored replay (:func:`public_replay`)."""
    return render_html(public_replay(stored, db))
