"""Answer times: the summary of a seat's, a game's and a bot's time use."""

from __future__ import annotations

import pytest

from referee.core.time_use import TimeRecorder, TimeUse, is_near_miss


def test_no_decisions_have_no_figures() -> None:
    assert TimeUse().to_json() == {
        "decisions": 0, "mean": None, "p95": None, "max": None, "near_misses": 0,
    }
    assert TimeUse().describe() == "no decisions"


def test_the_summary_of_twenty_answers() -> None:
    use = TimeUse(tuple(float(ms) for ms in range(1, 21)), 2)
    assert use.to_json() == {
        "decisions": 20, "mean": 10.5, "p95": 19.0, "max": 20.0, "near_misses": 2,
    }
    assert use.describe() == "mean 10.5 ms, p95 19.0, max 20.0, 2 near misses"


def test_p95_is_the_nearest_rank() -> None:
    assert TimeUse((7.0,)).p95 == 7.0
    assert TimeUse(tuple(float(ms) for ms in range(100, 0, -1))).p95 == 95.0


def test_times_keep_one_decimal() -> None:
    assert TimeUse((1.26, 3.0)).times_ms == (1.3, 3.0)


@pytest.mark.parametrize(
    ("elapsed", "allowed", "near"),
    [(449.9, 500, False), (450.0, 500, True), (480.0, 500, True), (10.0, 500, False)],
)
def test_a_near_miss_is_within_ten_percent_of_the_allowance(
    elapsed: float, allowed: int, near: bool
) -> None:
    assert is_near_miss(elapsed, allowed) is near


def test_merging_keeps_every_answer() -> None:
    merged = TimeUse.merge([TimeUse((1.0, 2.0), 1), TimeUse(), TimeUse((3.0,), 0)])
    assert merged == TimeUse((1.0, 2.0, 3.0), 1)


def test_the_recorder_keeps_each_seat_apart() -> None:
    recorder = TimeRecorder(3)
    recorder.record(0, 480.0, 500)
    recorder.record(2, 12.0, 500)
    recorder.record(0, 20.0, 1000)
    assert list(recorder.seats()) == [TimeUse((480.0, 20.0), 1), TimeUse(), TimeUse((12.0,), 0)]
