"""Time controls and seat clocks: pure arithmetic."""

from __future__ import annotations

import math

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from taki_protocol import TimeLimits
from taki_protocol.constants import MAX_INT32

from referee.core.clock import (
    CPU_WALL_CAP,
    DEFAULT_GRACE_MS,
    MAX_MS,
    Charge,
    SeatClock,
    TimeBasis,
    TimeControl,
)

# --------------------------------------------------------------------------- TimeControl


def test_defaults_are_a_per_move_limit() -> None:
    tc = TimeControl()
    assert tc.move_ms == 1000
    assert tc.bank_ms is None
    assert tc.increment_ms == 0
    assert tc.reaction_ms == 1000
    assert tc.startup_ms == 10_000
    assert tc.grace_ms == DEFAULT_GRACE_MS
    assert tc.startup_deadline_ms == 10_000 + DEFAULT_GRACE_MS
    assert tc.reaction_deadline_ms == 1000 + DEFAULT_GRACE_MS


def test_needs_move_or_bank() -> None:
    with pytest.raises(ValueError, match="move_ms, bank_ms or both"):
        TimeControl(move_ms=None, bank_ms=None)
    assert TimeControl(move_ms=None, bank_ms=5000).bank_ms == 5000


def test_increment_needs_bank() -> None:
    with pytest.raises(ValueError, match="requires a bank"):
        TimeControl(increment_ms=10)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"move_ms": 0},
        {"move_ms": -1},
        {"bank_ms": 0},
        {"reaction_ms": 0},
        {"startup_ms": 0},
        {"grace_ms": -1},
        {"bank_ms": 1000, "increment_ms": -5},
    ],
)
def test_rejects_out_of_range(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        TimeControl(**kwargs)


@pytest.mark.parametrize(
    "field", ["move_ms", "bank_ms", "increment_ms", "reaction_ms", "startup_ms", "grace_ms"]
)
def test_every_limit_fits_the_protocol(field: str) -> None:
    """A limit the protocol cannot carry (beyond 2**31 - 1 ms) is refused when the time
    control is made, naming the field; the largest one it carries is accepted and
    encodes into a game_start."""
    assert MAX_MS == MAX_INT32 == 2**31 - 1
    base = {"bank_ms": 1000} if field == "increment_ms" else {}
    with pytest.raises(ValueError, match=rf"^{field} must be at most 2147483647 .*got 2147483648$"):
        TimeControl(**{**base, field: MAX_MS + 1})
    tc = TimeControl(**{**base, field: MAX_MS})
    assert getattr(tc, field) == MAX_MS
    wire = TimeLimits(move_ms=tc.move_ms, bank_ms=tc.bank_ms, increment_ms=tc.increment_ms,
                    reaction_ms=tc.reaction_ms)
    assert TimeLimits.from_wire(wire.to_wire()) == wire


def test_bank_never_grows_beyond_what_the_protocol_carries() -> None:
    clock = SeatClock(TimeControl(move_ms=None, bank_ms=MAX_MS - 10, increment_ms=MAX_MS))
    clock.charge(4)
    assert clock.time_left_ms() == MAX_MS
    assert clock.allowed_ms() == MAX_MS
    clock.charge(1000)
    assert clock.time_left_ms() == MAX_MS


@pytest.mark.parametrize("value", [1.5, "100", True])
def test_rejects_non_int(value: object) -> None:
    with pytest.raises(TypeError):
        TimeControl(move_ms=value)  # type: ignore[arg-type]


def test_zero_grace_and_increment_allowed() -> None:
    tc = TimeControl(bank_ms=1000, increment_ms=0, grace_ms=0)
    assert tc.grace_ms == 0


def test_is_frozen() -> None:
    tc = TimeControl()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        tc.move_ms = 5  # type: ignore[misc]


def test_describe() -> None:
    assert TimeControl().describe() == "1000 ms/move"
    assert TimeControl(move_ms=None, bank_ms=60_000, increment_ms=100).describe() == (
        "60000+100 ms bank"
    )
    assert TimeControl(move_ms=500, bank_ms=60_000).describe() == "60000 ms bank, 500 ms/move"


# --------------------------------------------------------------------------- SeatClock


def test_move_only_clock() -> None:
    clock = SeatClock(TimeControl(move_ms=1000, grace_ms=20))
    assert clock.time_left_ms() is None
    assert clock.allowed_ms() == 1000
    assert clock.deadline_ms() == 1020
    verdict = clock.charge(1015.0)
    assert not verdict.late  # inside the grace
    assert clock.allowed_ms() == 1000
    assert clock.charge(1020.5).late
    assert clock.decisions == 2


def test_bank_is_charged_and_incremented() -> None:
    clock = SeatClock(TimeControl(move_ms=None, bank_ms=1000, increment_ms=50, grace_ms=0))
    assert clock.allowed_ms() == 1000
    assert not clock.charge(300).late
    assert clock.time_left_ms() == 1000 - 300 + 50
    assert clock.allowed_ms() == 750


def test_move_cap_applies_under_bank() -> None:
    clock = SeatClock(TimeControl(move_ms=200, bank_ms=1000, grace_ms=10))
    assert clock.allowed_ms() == 200
    clock.charge(150)
    clock.charge(190)
    clock.charge(190)
    clock.charge(190)
    assert clock.time_left_ms() == 280
    assert clock.allowed_ms() == 200
    clock.charge(190)
    assert clock.time_left_ms() == 90
    assert clock.allowed_ms() == 90  # the bank is now the tighter limit
    assert clock.deadline_ms() == 100


def test_late_decision_empties_bank_without_increment() -> None:
    clock = SeatClock(TimeControl(move_ms=None, bank_ms=100, increment_ms=50, grace_ms=5))
    verdict = clock.charge(200)
    assert verdict.late
    assert verdict == Charge(elapsed_ms=200, allowed_ms=100, deadline_ms=105)
    assert clock.time_left_ms() == 0


def test_grace_overrun_clamps_bank_but_keeps_increment() -> None:
    clock = SeatClock(TimeControl(move_ms=None, bank_ms=100, increment_ms=50, grace_ms=5))
    assert not clock.charge(104).late
    assert clock.time_left_ms() == 50


def test_rounding_to_nearest_ms() -> None:
    clock = SeatClock(TimeControl(move_ms=None, bank_ms=1000, grace_ms=0))
    clock.charge(0.4)
    assert clock.time_left_ms() == 1000
    clock.charge(0.5)
    assert clock.time_left_ms() == 999
    clock.charge(1.49)
    assert clock.time_left_ms() == 998
    assert clock.used_ms == 2


def test_lateness_uses_unrounded_elapsed() -> None:
    clock = SeatClock(TimeControl(move_ms=100, grace_ms=0))
    assert clock.charge(100.0).late is False
    assert clock.charge(100.3).late is True


def test_reaction_is_not_charged() -> None:
    clock = SeatClock(TimeControl(move_ms=None, bank_ms=500, reaction_ms=300, grace_ms=10))
    assert clock.reaction_allowed_ms() == 300
    assert clock.reaction_deadline_ms() == 310
    assert not clock.check_reaction(305).late
    assert clock.check_reaction(311).late
    assert clock.time_left_ms() == 500
    assert clock.decisions == 0


@pytest.mark.parametrize("bad", [-1, -0.001, math.nan, math.inf])
def test_rejects_bad_elapsed(bad: float) -> None:
    clock = SeatClock(TimeControl())
    with pytest.raises(ValueError):
        clock.charge(bad)
    with pytest.raises(ValueError):
        clock.check_reaction(bad)


def test_charge_describe() -> None:
    assert Charge(1234.4, 1000, 1020).describe() == "took 1234 ms, allowed 1000 ms + 20 ms grace"
    assert Charge(180, 0, 100).describe() == "took 180 ms, allowed 0 ms + 100 ms grace"
    assert Charge(12, 10, 10).describe() == "took 12 ms, allowed 10 ms"


# --------------------------------------------------------------------------- properties

controls = st.builds(
    TimeControl,
    move_ms=st.none() | st.integers(1, 10_000),
    bank_ms=st.integers(1, 100_000),
    increment_ms=st.integers(0, 1000),
    reaction_ms=st.integers(1, 5000),
    startup_ms=st.integers(1, 20_000),
    grace_ms=st.integers(0, 100),
)
elapsed_lists = st.lists(st.floats(0, 20_000, allow_nan=False), max_size=40)


@given(controls, elapsed_lists)
def test_bank_never_negative_and_allowance_bounded(tc: TimeControl, elapsed: list[float]) -> None:
    clock = SeatClock(tc)
    for e in elapsed:
        allowed = clock.allowed_ms()
        left = clock.time_left_ms()
        assert left is not None and left >= 0
        assert 0 <= allowed <= left
        if tc.move_ms is not None:
            assert allowed <= tc.move_ms
        clock.charge(e)
        left = clock.time_left_ms()
        assert left is not None and left >= 0


@given(controls, elapsed_lists)
def test_bank_accounting_when_on_time(tc: TimeControl, elapsed: list[float]) -> None:
    """While nothing is late, the bank is exactly start + increments - rounded elapsed."""
    clock = SeatClock(tc)
    assert tc.bank_ms is not None
    for e in elapsed:
        if e > clock.allowed_ms():  # keep every decision within its allowance
            e = float(clock.allowed_ms())
        verdict = clock.charge(e)
        assert not verdict.late
    expected = tc.bank_ms + tc.increment_ms * clock.decisions - clock.used_ms
    assert clock.time_left_ms() == expected


@given(controls, st.floats(0, 50_000, allow_nan=False))
def test_late_iff_over_deadline(tc: TimeControl, elapsed: float) -> None:
    clock = SeatClock(tc)
    deadline = clock.deadline_ms()
    assert deadline == clock.allowed_ms() + tc.grace_ms
    assert clock.charge(elapsed).late == (elapsed > deadline)


@given(controls, elapsed_lists)
def test_reactions_leave_clock_untouched(tc: TimeControl, elapsed: list[float]) -> None:
    clock = SeatClock(tc)
    before = (clock.time_left_ms(), clock.allowed_ms(), clock.decisions, clock.used_ms)
    for e in elapsed:
        assert clock.check_reaction(e).late == (e > tc.reaction_ms + tc.grace_ms)
    assert (clock.time_left_ms(), clock.allowed_ms(), clock.decisions, clock.used_ms) == before


def test_the_cpu_basis_caps_wall_time_at_ten_times_the_deadline() -> None:
    wall = TimeControl(move_ms=100, time_basis=TimeBasis.WALL)
    cpu = TimeControl(move_ms=100)
    assert cpu.time_basis is TimeBasis.CPU  # the default
    assert wall.wall_cap_ms(105) == 105
    assert cpu.wall_cap_ms(105) == 105 * CPU_WALL_CAP
    assert cpu.wall_cap_ms(MAX_MS) == MAX_MS  # never past what the protocol carries
    assert TimeControl(time_basis="cpu").time_basis is TimeBasis.CPU  # type: ignore[arg-type]
    assert cpu.describe() == "100 ms/move"
    assert wall.describe() == "100 ms/move, wall time"
    with pytest.raises(ValueError):
        TimeControl(time_basis="process")  # type: ignore[arg-type]
