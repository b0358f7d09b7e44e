"""What the commands print besides their results: progress, time use and fault lines."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.progress import Progress

from referee.cli import output
from referee.cli.output import FaultTally, describe_counts, progress, time_cells
from referee.core.fairness import Blame, InfraEvent, WaitFigures
from referee.core.faults import FaultReason
from referee.core.outcomes import GameOutcome, SeatForfeit, SeatOutcome
from referee.core.schedule import ScheduledGame
from referee.core.time_use import TimeUse
from referee.rules import EndReason


def outcome(*seats: SeatOutcome) -> GameOutcome:
    game = ScheduledGame("g1", "b", 0, 0, 1, tuple(s.bot for s in seats))
    return GameOutcome(game, tuple(seats), 10, EndReason.WIN, None)


def test_resumed_progress_does_not_count_as_speed(monkeypatch: pytest.MonkeyPatch) -> None:
    tasks: list[Any] = []
    add_task = Progress.add_task

    def spy(self: Progress, *args: Any, **kwargs: Any) -> Any:
        task_id = add_task(self, *args, **kwargs)
        tasks.append(self._tasks[task_id])
        return task_id

    monkeypatch.setattr(Progress, "add_task", spy)
    stream = io.StringIO()
    with progress(40, "league", terminal_bar=True, completed=30, stream=stream) as advance:
        advance()
        advance()
        (task,) = tasks
        assert task.completed == 32
        # The speed (hence the time left) comes from the two games of this run only.
        assert [sample.completed for sample in task._progress] == [1, 1]
    with progress(40, "league", terminal_bar=True, completed=50, stream=stream):
        assert tasks[1].completed == 40


def test_off_a_terminal_progress_is_a_plain_line_now_and_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(output.time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    with progress(10, "sprt", terminal_bar=False, completed=2, status=lambda: "LLR +0.50",
                  interval_s=10, stream=stream) as advance:
        for _ in range(3):  # within the first 10 s: nothing
            now[0] += 2
            advance()
        assert stream.getvalue() == ""
        now[0] += 5  # 11 s after the start, with 4 games done in this run
        advance()
        now[0] += 1
        advance()
    lines = stream.getvalue().splitlines()
    assert lines == ["sprt: 6/10 games, 0.4 games/s, 0:11 elapsed; LLR +0.50"]


def test_an_interval_of_zero_prints_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    monkeypatch.setattr(output.time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    with progress(5, "match", terminal_bar=False, interval_s=0, stream=stream) as advance:
        for _ in range(5):
            now[0] += 100
            advance()
    assert stream.getvalue() == ""


def test_time_cells() -> None:
    assert time_cells(TimeUse()) == ("-", "-")
    assert time_cells(TimeUse((10.0, 480.4), 1)) == ("245/480/480", "1")
    assert time_cells(TimeUse((0.3, 1.2), 0)) == ("0.8/1.2/1.2", "0")


def test_fault_lines_name_reasons_counts_the_last_detail_and_the_log(tmp_path: Path) -> None:
    tally = FaultTally()
    log = tmp_path / "m-crashy.log"
    crash = SeatForfeit(FaultReason.CRASH,
                        "the bot exited with status 3\nTraceback (most recent call last):")
    for _ in range(2):
        tally.add(outcome(
            SeatOutcome(0, "crashy", 2, 10, crash, log=log),
            SeatOutcome(1, "fine", 1, 0, log=tmp_path / "m-fine.log"),
        ))
    tally.add(outcome(
        SeatOutcome(0, "crashy", 2, 10,
                    SeatForfeit(FaultReason.TIMEOUT, "no answer within 1005 ms"), log=log),
        SeatOutcome(1, "fine", 1, 0),
    ))
    assert tally.count("crashy") == 3 and tally.count("fine") == 0
    assert tally.lines() == [
        f"crashy forfeited 3 games: crash 2, timeout 1 (last: no answer within 1005 ms);"
        f" its log: {log}"
    ]


def test_fault_lines_of_a_resumed_league_count_every_stored_game(tmp_path: Path) -> None:
    tally = FaultTally()  # this run saw no fault; the database holds two of earlier runs
    stored = {"old": {"crash": 2}, "clean": {}}
    assert tally.lines(stored, tmp_path) == [
        f"old forfeited 2 games: crash 2; its logs: {tmp_path}/*-old*.log"
    ]


def test_describe_counts() -> None:
    assert describe_counts({"timeout": 1, "crash": 2}) == "crash 2, timeout 1"


def test_the_tally_counts_voided_plays_and_games() -> None:
    figures = WaitFigures(window_ms=60.0, wait_ms=120.0, cpu_ms=4.0, run_delay_ms=50.0,
                          runnable=True, load_per_cpu=8.2)
    event = InfraEvent("g1", 0, 0, "a", Blame.STARVED, "no answer within 100 ms", figures)
    tally = FaultTally()
    assert tally.void_line() is None
    game = ScheduledGame("g1", "b", 0, 0, 1, ("a", "b"))
    tally.add(GameOutcome(game, (), 0, None, None, infra=(event, event), voided=True))
    tally.add(outcome(SeatOutcome(0, "a", 1, 0), SeatOutcome(1, "b", 2, 5)))
    line = tally.void_line()
    assert line is not None
    assert line.startswith("2 plays voided by infrastructure faults (timeouts the machine"
                           " caused) and played again; 1 game voided every time")
    assert "a (seat 0) timed out, starved of CPU" in line
    assert tally.lines() == []  # no forfeit: a voided play is nobody's fault
