"""The organizer's games and forfeits a minute: over the last ten minutes, or over the
minutes since the server began counting when fewer (right after a start)."""

from __future__ import annotations

import pytest

from referee.server.pages import digest
from referee.server.pages.digest import Digest


def test_games_a_minute_right_after_a_start_count_the_minutes_since(
        monkeypatch: pytest.MonkeyPatch) -> None:
    start = 1_000_000.0
    counted = Digest()
    counted.counting_since = start
    counted.recent.extend([(int(start) + 10, 19, 0), (int(start) + 100, 1, 1)])
    now = start + 120  # two minutes after the start: 20 games in 2 minutes
    monkeypatch.setattr(digest.time, "time", lambda: now)
    assert counted.per_minute() == (10.0, 0.5)
    now = start + 15  # within the first minute: over a whole minute, never more
    assert counted.per_minute() == (20.0, 1.0)
    now = start + 3600  # an hour on: the last ten minutes (none landed in them)
    assert counted.per_minute() == (0.0, 0.0)
    counted.recent.append((int(now) - 30, 50, 0))
    assert counted.per_minute() == (5.0, 0.0)
