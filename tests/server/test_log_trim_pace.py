"""The ladder's log trim keeps to its share of a thread: after a pass over a large
folder it pauses twenty times as long as the pass took, never under 10 s nor over
5 minutes."""

from __future__ import annotations

import pytest

from referee.server.ladder_link import LOGS_MAX_PAUSE_S, LOGS_PACE, LOGS_POLL_S, trim_pause


@pytest.mark.parametrize(("took", "pause"), [
    (0.0, LOGS_POLL_S), (0.018, LOGS_POLL_S), (0.5, LOGS_POLL_S),  # small folders: 10 s
    (0.9, 0.9 * LOGS_PACE), (9.0, 9.0 * LOGS_PACE),  # 100,000 and 1,000,000 files
    (60.0, LOGS_MAX_PAUSE_S), (1e6, LOGS_MAX_PAUSE_S),  # never left untrimmed for long
])
def test_a_trim_pauses_twenty_times_its_time_within_bounds(took: float, pause: float) -> None:
    assert trim_pause(took) == pytest.approx(pause)
    assert trim_pause(took) >= min(LOGS_PACE * took, LOGS_MAX_PAUSE_S)  # its share
