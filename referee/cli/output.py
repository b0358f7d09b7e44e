"""What the commands print besides their results: JSON, progress, time use and faults."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import attrs
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from referee.core import GameOutcome, TimeSummary, TimeUse, short_detail

#: How often, by default, progress is printed as a line when standard error is not a
#: terminal (a CI log): often enough to see a run is alive, rarely enough to read.
PROGRESS_INTERVAL_S = 10.0


def finite_json(value: Any) -> Any:
    """``value`` with every infinite or NaN float replaced by None, so that it prints as
    strict JSON (``null``; never ``Infinity``, which JSON parsers refuse)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value


def print_json(value: Any) -> None:
    """Print ``value`` as one line of strict JSON (non-finite numbers become null)."""
    print(json.dumps(finite_json(value), allow_nan=False))


# ------------------------------------------------------------------- progress


class _SpeedColumn(ProgressColumn):
    """Games per second over this run (games done before a resume do not count)."""

    def render(self, task: Task) -> Text:
        speed = task.fields.get("speed", 0.0)
        return Text(f"{speed:.1f} games/s" if speed else "- games/s", style="progress.data.speed")


@attrs.define
class _Counter:
    total: int
    done: int
    started: float = attrs.field(factory=lambda: time.monotonic())
    this_run: int = 0

    def advance(self) -> None:
        self.done += 1
        self.this_run += 1

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def speed(self) -> float:
        return self.this_run / self.elapsed if self.elapsed > 0 else 0.0

    def line(self, label: str, status: str) -> str:
        minutes, seconds = divmod(int(self.elapsed), 60)
        text = (f"{label}: {self.done}/{self.total} games, {self.speed:.1f} games/s,"
                f" {minutes}:{seconds:02d} elapsed")
        return f"{text}; {status}" if status else text


@contextmanager
def progress(
    total: int,
    label: str,
    *,
    terminal_bar: bool,
    completed: int = 0,
    status: Callable[[], str] | None = None,
    interval_s: float = PROGRESS_INTERVAL_S,
    stream: TextIO | None = None,
) -> Iterator[Callable[[], None]]:
    """Progress of a run of ``total`` games, on standard error; yields the function to
    call after each game.

    With ``terminal_bar`` (standard error is a terminal and the results are not JSON),
    a live bar with labelled columns; otherwise one plain line at most every
    ``interval_s`` seconds (0: never), as match runners print to a CI log: ``N/M games``,
    games per second, the time elapsed and ``status()`` (an SPRT's score and LLR).
    ``completed`` games were done before (a resumed league): they fill the bar without
    counting toward the speed."""
    counter = _Counter(total, min(completed, total))
    describe = status or (lambda: "")
    if terminal_bar:
        bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("games"),
            _SpeedColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            console=Console(stderr=True, file=stream),
            transient=True,
        )
        with bar:
            task = bar.add_task(label, total=total, completed=counter.done, speed=0.0,
                                status=describe())

            def advance_bar() -> None:
                counter.advance()
                bar.update(task, advance=1, speed=counter.speed, status=describe())

            yield advance_bar
        return
    out = stream or sys.stderr
    last = time.monotonic()

    def advance_line() -> None:
        nonlocal last
        counter.advance()
        now = time.monotonic()
        if interval_s > 0 and now - last >= interval_s:
            last = now
            print(counter.line(label, describe()), file=out, flush=True)

    yield advance_line


# ------------------------------------------------------------------ time use


#: The width of the commands' tables when they are not printed to a terminal (a CI
#: log or a file, which do not wrap lines): wide enough for a leaderboard's columns.
LOG_WIDTH = 132


def table_console(*, stderr: bool = False) -> Console:
    """A console for the commands' tables: a terminal's width, or :data:`LOG_WIDTH`."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else LOG_WIDTH)


#: The headers of the two time-use columns of the commands' tables.
TIME_HEADERS = ("ms mean/p95/max", "near misses")


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def time_cells(use: TimeUse | TimeSummary) -> tuple[str, str]:
    """A bot's time use in two table cells: ``mean/p95/max`` in ms, and near misses."""
    if not use.decisions or use.mean is None or use.p95 is None or use.max is None:
        return "-", "-"
    return f"{_ms(use.mean)}/{_ms(use.p95)}/{_ms(use.max)}", str(use.near_misses)


def add_columns(table: Table, names: Sequence[str], left: Sequence[str] = ("bot",)) -> None:
    """The columns ``names`` of a results table, then the two time-use columns, which
    never wrap (other headers do, when the table is too wide)."""
    for name in names:
        table.add_column(name, justify="left" if name in left else "right")
    table.add_column(TIME_HEADERS[0], justify="right", no_wrap=True)
    table.add_column(TIME_HEADERS[1], justify="right")


# -------------------------------------------------------------------- faults


def describe_counts(counts: Mapping[str, int]) -> str:
    """``{"crash": 2, "timeout": 1}`` in words: ``crash 2, timeout 1``."""
    return ", ".join(f"{reason} {count}" for reason, count in sorted(counts.items()))


@attrs.define
class _BotFaults:
    counts: dict[str, int] = attrs.field(factory=dict)
    last_detail: str = ""
    log: Path | None = None


@attrs.define
class FaultTally:
    """The forfeits of each bot over a run, with the log of its last forfeited game: what
    the commands print after their results, one line per bot that faulted."""

    bots: dict[str, _BotFaults] = attrs.field(factory=dict)
    #: Plays of games voided by an infrastructure fault (played again), and games voided
    #: every time (no result), with the last event's description.
    void_plays: int = 0
    voided_games: int = 0
    last_void: str = ""

    def add(self, outcome: GameOutcome) -> None:
        self.void_plays += len(outcome.infra)
        self.voided_games += outcome.voided
        if outcome.infra:
            self.last_void = outcome.infra[-1].describe()
        for seat in outcome.seats:
            if seat.forfeit is None:
                continue
            faults = self.bots.setdefault(seat.bot, _BotFaults())
            reason = str(seat.forfeit.reason)
            faults.counts[reason] = faults.counts.get(reason, 0) + 1
            faults.last_detail = seat.forfeit.detail
            faults.log = seat.log or faults.log

    def count(self, bot: str) -> int:
        faults = self.bots.get(bot)
        return 0 if faults is None else sum(faults.counts.values())

    def lines(self, stored: Mapping[str, Mapping[str, int]] | None = None,
              log_dir: Path | None = None) -> list[str]:
        """One line per bot that faulted: its forfeits by reason (``stored``: the counts
        of a whole league, including games stored by earlier runs), the last one's
        detail, and the log to read (for games of earlier runs: ``log_dir``)."""
        counts = {bot: dict(f.counts) for bot, f in self.bots.items()}
        if stored is not None:
            counts = {bot: dict(c) for bot, c in stored.items() if c}
        out = []
        for bot in sorted(counts):
            faults = self.bots.get(bot, _BotFaults())
            games = sum(counts[bot].values())
            text = (f"{bot} forfeited {games} game{'s' if games != 1 else ''}:"
                    f" {describe_counts(counts[bot])}")
            if faults.last_detail:
                text += f" (last: {short_detail(faults.last_detail)})"
            if faults.log is not None:
                text += f"; its log: {faults.log}"
            elif log_dir is not None:
                text += f"; its logs: {log_dir}/*-{bot}*.log"
            out.append(text)
        return out

    def void_line(self) -> str | None:
        """What infrastructure faults cost the run, when they cost anything."""
        if not self.void_plays:
            return None
        plays = f"{self.void_plays} play{'s' if self.void_plays != 1 else ''}"
        games = f"{self.voided_games} game{'s' if self.voided_games != 1 else ''}"
        return (f"{plays} voided by infrastructure faults (timeouts the machine caused) and"
                f" played again; {games} voided every time, without a result"
                f" (last: {self.last_void})")

    def print(self, stored: Mapping[str, Mapping[str, int]] | None = None,
              log_dir: Path | None = None) -> None:
        """The lines on standard error, each marked as a fault."""
        err = Console(stderr=True, soft_wrap=True, highlight=False)
        for line in self.lines(stored, log_dir):
            err.print(f"[yellow]fault[/]: {escape(line)}")
        void = self.void_line()
        if void is not None:
            err.print(f"[yellow]infrastructure[/]: {escape(void)}")
