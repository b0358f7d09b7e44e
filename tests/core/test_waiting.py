"""The rules of one timed wait (referee.core.waiting), fed scripted figures and clock
times: each rule of PROTOCOL.md section 9 once, no process, no clock."""

from __future__ import annotations

import attrs
import pytest

from referee.core.clock import CPU_STARVED_CAP, CPU_WALL_CAP, TimeBasis
from referee.core.fairness import STARVED_WAIT_CAP, Blame, WaitFigures, judge, min_extension_ms
from referee.core.waiting import (
    WALL_CHECK_SHARE,
    Look,
    Measure,
    Need,
    Verdict,
    WaitPolicy,
)

START = 100.0
SPAN_MS = 105  # told 100 ms, grace 5
SPAN = SPAN_MS / 1000

#: A window in which the bot was runnable but got 2 ms of CPU on a busy host: starved.
STARVED = WaitFigures(window_ms=50.0, wait_ms=105.0, cpu_ms=2.0, run_delay_ms=40.0,
                      runnable=True, runnable_at_end=True, cpu_pressure=0.9,
                      wait_cpu_ms=20.0, wait_sampled_ms=105.0)
#: A window in which the bot slept: not runnable, no wait for a CPU.
ASLEEP = WaitFigures(window_ms=50.0, wait_ms=105.0, cpu_ms=0.0, run_delay_ms=0.0,
                     wait_cpu_ms=0.0, wait_sampled_ms=105.0)


def wall(**kwargs: object) -> WaitPolicy:
    settings: dict[str, object] = {"start": START, "span_ms": SPAN_MS, "told_ms": 100,
                                   "watched": True, "basis": TimeBasis.WALL}
    settings.update(kwargs)
    return WaitPolicy(**settings)  # type: ignore[arg-type]


def cpu(**kwargs: object) -> WaitPolicy:
    return wall(basis=TimeBasis.CPU, **kwargs)


def begun(policy: WaitPolicy) -> Look:
    """The policy after its check point, looking until the deadline."""
    first = policy.first()
    assert first == Look(START + SPAN * WALL_CHECK_SHARE, Need.BEGIN)
    step = policy.woke(first.until)
    assert isinstance(step, Look)
    return step


# ---------------------------------------------------------------- unwatched


def test_an_unwatched_wait_has_one_deadline() -> None:
    policy = wall(watched=False)
    assert policy.first() == Look(START + SPAN, Need.NOTHING)
    assert policy.answered(START + 0.040) == Verdict(True, pytest.approx(40.0))
    timeout = wall(watched=False).woke(START + SPAN)
    assert timeout == Verdict(False, pytest.approx(SPAN_MS), "no answer within 100 ms", None)


def test_an_answer_the_late_referee_read_late_is_judged_when_it_meant_to_look() -> None:
    """The referee's lateness is never the bot's: an answer found at 3x the deadline by
    a referee that meant to look at the deadline is in time, charged the deadline."""
    policy = wall(watched=False)
    verdict = policy.answered(START + 3 * SPAN)
    assert verdict == Verdict(True, pytest.approx(SPAN_MS))


def test_the_cpu_basis_falls_back_to_wall_time_where_cpu_time_cannot_be_read() -> None:
    policy = cpu(watched=False, metered=False)
    assert policy.first() == Look(START + SPAN, Need.NOTHING)


# -------------------------------------------------------------- wall, watched


def test_a_fast_answer_costs_no_sample() -> None:
    """Before the check point (half the span) nothing is measured."""
    policy = wall()
    assert policy.first().then is Need.BEGIN
    assert policy.answered(START + 0.010) == Verdict(True, pytest.approx(10.0))


def test_a_sleeping_bot_gets_no_extension() -> None:
    policy = wall()
    look = begun(policy)
    assert look == Look(START + SPAN, Need.WINDOW)
    verdict = policy.woke(look.until, figures=ASLEEP)
    assert verdict == Verdict(False, pytest.approx(SPAN_MS), "no answer within 100 ms", None)


def test_a_starved_bot_is_waited_for_and_charged_the_time_it_could_think() -> None:
    """Starved over the window: the deadline moves on by the time it was kept off the
    CPU since the request (the wait less its CPU time), and it is charged the wait less
    that extension."""
    policy = wall()
    look = begun(policy)
    step = policy.woke(look.until, figures=STARVED)
    off_s = (STARVED.wait_sampled_ms - STARVED.wait_cpu_ms) / 1000  # type: ignore[operator]
    assert step == Look(START + SPAN + off_s, Need.WINDOW)
    verdict = policy.answered(START + SPAN + off_s - 0.001)
    assert isinstance(verdict, Verdict) and verdict.answered
    assert verdict.charged_ms == pytest.approx(SPAN_MS - 1, abs=0.01)


def test_the_next_look_comes_no_sooner_than_the_shortest_extension() -> None:
    policy = wall()
    look = begun(policy)
    small = attrs.evolve(STARVED, wait_cpu_ms=104.0, run_delay_ms=1.0)  # 1 ms off the CPU
    step = policy.woke(look.until, figures=small)
    assert step == Look(START + SPAN + min_extension_ms(SPAN_MS) / 1000, Need.WINDOW)


def test_a_bot_that_may_be_waiting_for_a_cpu_is_looked_at_a_step_later() -> None:
    """Its deadline passed, but a thread of it is runnable (the kernel counts a wait
    when it ends): it is watched a step longer rather than found out of time."""
    policy = wall()
    look = begun(policy)
    waiting = attrs.evolve(ASLEEP, runnable_at_end=True)
    step = policy.woke(look.until, figures=waiting)
    assert step == Look(look.until + min_extension_ms(SPAN_MS) / 1000, Need.WINDOW)


def test_a_wait_starved_up_to_its_cap_ends_with_figures_to_judge() -> None:
    policy = wall(starved_cap=2)
    look = begun(policy)
    step: object = policy.woke(look.until, figures=STARVED)
    while isinstance(step, Look):
        step = policy.woke(step.until, figures=attrs.evolve(STARVED, wait_sampled_ms=1e6))
    assert isinstance(step, Verdict) and not step.answered
    assert step.figures is not None and judge(step.figures, 5) is Blame.STARVED
    assert policy.cap == pytest.approx(START + 2 * SPAN)


def test_the_default_cap_is_starved_wait_cap_times_the_span() -> None:
    assert wall().cap == pytest.approx(START + STARVED_WAIT_CAP * SPAN)


def test_the_games_own_doing_buys_no_extension() -> None:
    """The other bots of the game took the CPUs: no extension, a plain timeout."""
    policy = wall()
    look = begun(policy)
    crowded = attrs.evolve(STARVED, others_cpu_ms=40.0, runnable_at_end=False)
    assert policy.woke(look.until, figures=crowded) == Verdict(
        False, pytest.approx(SPAN_MS), "no answer within 100 ms", None)


def after_a_step(policy: WaitPolicy) -> Look:
    """The policy looking a step past the deadline at a bot that may be waiting for a
    CPU: an answer read then came after its deadline."""
    look = begun(policy)
    step = policy.woke(look.until, figures=attrs.evolve(ASLEEP, runnable_at_end=True))
    assert isinstance(step, Look) and step.until > policy.deadline
    return step


def test_an_answer_read_after_its_deadline_is_judged_on_its_waits_for_a_cpu() -> None:
    """The answer came 20 ms after its deadline; its processes waited 40 ms for a CPU
    over the window: without those waits it was in time."""
    policy = wall()
    after_a_step(policy)
    read = policy.deadline + 0.020
    assert policy.answered(read) == Measure(Need.WINDOW)
    verdict = policy.measured(read, attrs.evolve(ASLEEP, run_delay_ms=40.0))
    assert verdict.answered and verdict.figures is None
    assert verdict.charged_ms == pytest.approx(SPAN_MS + 20 - 40)


def test_an_answer_read_late_is_its_own_when_the_game_made_the_referee_late() -> None:
    """The referee meant to look a step after the deadline but ran 200 ms late, while
    the game's other bots took the CPUs: no benefit of the doubt, the answer is judged
    as read, late."""
    policy = wall()
    look = after_a_step(policy)
    read = look.until + 0.200
    assert policy.answered(read) == Measure(Need.WINDOW)
    crowded = attrs.evolve(ASLEEP, others_cpu_ms=400.0, window_ms=300.0)
    verdict = policy.measured(read, crowded)
    assert verdict.charged_ms == pytest.approx((read - START) * 1000)
    assert verdict.charged_ms > SPAN_MS  # late: the clock forfeits it


# ------------------------------------------------------------------ CPU time


def test_the_cpu_basis_charges_cpu_time() -> None:
    policy = cpu()
    assert policy.first() == Look(START + SPAN, Need.USED)
    # Read long after it came (the referee was starved): still its CPU time.
    assert policy.answered(START + 50 * SPAN, used_ms=30.0) == Verdict(True, 30.0)


def test_the_cpu_time_is_read_again_when_it_could_next_pass_the_deadline() -> None:
    policy = cpu()
    step = policy.woke(START + SPAN, used_ms=45.0)
    assert step == Look(START + SPAN + (SPAN_MS - 45.0) / 1000, Need.USED)


def test_a_bot_over_its_cpu_time_times_out_as_its_own() -> None:
    verdict = cpu().woke(START + SPAN, used_ms=106.0)
    detail = "used 106 ms of CPU time, allowed 100 ms + 5 ms grace"
    assert verdict == Verdict(False, 106.0, detail, None)


def test_a_bot_that_used_its_cpu_time_times_out_at_the_wall_cap() -> None:
    policy = cpu()
    assert policy.cap == pytest.approx(START + CPU_WALL_CAP * SPAN)
    verdict = policy.woke(policy.cap, used_ms=100.0)
    assert isinstance(verdict, Verdict) and not verdict.answered and verdict.figures is None
    assert verdict.detail == (f"no answer within {CPU_WALL_CAP * SPAN_MS} ms of wall time (the"
                              f" cap: {CPU_WALL_CAP} times 100 ms + 5 ms grace; it used 100 ms"
                              " of CPU time)")


def test_a_bot_starved_at_the_wall_cap_is_waited_for_up_to_the_starved_cap() -> None:
    policy = cpu()
    policy.woke(START + SPAN, used_ms=1.0)  # the watch begins
    step = policy.woke(policy.cap, used_ms=1.0)
    assert isinstance(step, Look) and step.then is Need.WINDOW
    step = policy.woke(step.until, figures=STARVED)
    assert isinstance(step, Look) and step.then is Need.USED
    assert policy.cap <= START + CPU_STARVED_CAP * SPAN + 1e-9
    # Asleep at the next cap: its own timeout, with the figures of its last window.
    step = policy.woke(policy.cap, used_ms=1.0)
    assert isinstance(step, Look)
    verdict = policy.woke(step.until, figures=ASLEEP)
    assert isinstance(verdict, Verdict) and not verdict.answered
    assert verdict.figures is not None and judge(verdict.figures, 5) is Blame.BOT


# ----------------------------------------------------------------- start-up

#: A start's processes waited for CPUs together, many times the window in all.
STARTING = WaitFigures(window_ms=105.0, wait_ms=105.0, cpu_ms=10.0, run_delay_ms=800.0,
                       runnable=True, runnable_at_end=True, wait_cpu_ms=10.0)


def startup(**kwargs: object) -> WaitPolicy:
    return wall(startup=True, **kwargs)


def startup_window() -> tuple[WaitPolicy, Look]:
    """A start watched from its first moment, looking until its deadline."""
    policy = startup()
    first = policy.first()
    assert first == Look(START, Need.BEGIN)
    step = policy.woke(START)
    assert step == Look(START + SPAN, Need.WINDOW)
    return policy, step


def test_a_start_kept_off_the_cpu_is_waited_for_by_that_time_at_most_the_window() -> None:
    """Its processes' waits for a CPU count at most the window (they wait at once), and
    the rules of crowding do not apply: its deadline moves on by the window."""
    policy, look = startup_window()
    step = policy.woke(look.until, figures=STARTING)
    assert step == Look(pytest.approx(START + 2 * SPAN), Need.WINDOW)
    assert policy.answered(START + 0.150) == Verdict(True, pytest.approx(45.0))


def test_a_sleeping_start_times_out_at_its_startup_time_naming_its_allowance() -> None:
    policy, look = startup_window()
    step = policy.woke(look.until, figures=attrs.evolve(ASLEEP, window_ms=105.0))
    assert isinstance(step, Verdict) and not step.answered and step.figures is None
    assert step.detail == ("no hello within the startup time of 100 ms: waited 105 ms, less 0 ms"
                           " the machine kept the bot off the CPU (at most 10500 ms in all);"
                           " it used 0 ms of CPU time")


def test_a_start_that_used_more_cpu_than_its_startup_time_times_out() -> None:
    policy, look = startup_window()
    step = policy.woke(look.until, figures=attrs.evolve(STARTING, wait_cpu_ms=106.0))
    assert isinstance(step, Verdict) and not step.answered and step.figures is None
    assert step.charged_ms == pytest.approx(106.0)
    assert step.detail.endswith("; it used 106 ms of CPU time")


def test_a_start_that_lowered_its_priority_buys_no_extension() -> None:
    policy, look = startup_window()
    step = policy.woke(look.until, figures=attrs.evolve(STARTING, lowered_priority=True))
    assert isinstance(step, Verdict) and not step.answered


def test_a_start_starved_up_to_its_cap_ends_there_with_figures_to_judge() -> None:
    policy = startup(starved_cap=3)
    policy.woke(START)
    now, step = START + SPAN, policy.woke(START + SPAN, figures=STARTING)
    while isinstance(step, Look):
        now = step.until
        step = policy.woke(now, figures=STARTING)
    assert now == pytest.approx(START + 3 * SPAN)
    # Its threads' waits overlap: at most the window, as credited; the machine's fault.
    assert isinstance(step, Verdict) and not step.answered
    assert step.figures == attrs.evolve(STARTING, run_delay_ms=105.0)
    assert judge(step.figures, 5) is Blame.STARVED
    assert "(at most 315 ms in all)" in step.detail
