"""Whose fault a timeout was (referee.core.fairness): the rules of voiding."""

from __future__ import annotations

import attrs

from referee.core.fairness import (
    MIN_EXTENSION_MS,
    Blame,
    InfraEvent,
    WaitFigures,
    charged_ms,
    extension_ms,
    judge,
    kept_off_ms,
    late_margin_ms,
    min_extension_ms,
)


def figures(**changes: object) -> WaitFigures:
    """A wait of 500 ms watched for 400, in which the bot got 40 ms of CPU and waited
    300 ms for one: starved, unless a test changes that."""
    base: dict[str, object] = {"window_ms": 400.0, "wait_ms": 500.0, "cpu_ms": 40.0,
                               "run_delay_ms": 300.0, "load_per_cpu": 9.0}
    return WaitFigures(**{**base, **changes})  # type: ignore[arg-type]


def test_a_bot_that_was_runnable_but_got_little_cpu_was_starved() -> None:
    assert judge(figures(), grace_ms=5) is Blame.STARVED


def test_a_bot_that_got_its_cpu_was_not_starved() -> None:
    """A bot that used most of a CPU and still did not answer took too long itself."""
    assert judge(figures(cpu_ms=380.0, run_delay_ms=20.0), grace_ms=5) is Blame.BOT


def test_a_bot_that_sleeps_or_waits_on_input_is_not_starved() -> None:
    """Not runnable (no CPU used, no wait for a CPU): whatever it waited on was its own."""
    assert judge(figures(cpu_ms=2.0, run_delay_ms=3.0), grace_ms=5) is Blame.BOT


def test_cpu_burnt_by_the_bots_own_children_is_its_own() -> None:
    """A bot whose forked busy loops took the machine is not starved: its tree's CPU
    time is all of it."""
    assert judge(figures(cpu_ms=790.0, run_delay_ms=900.0), grace_ms=5) is Blame.BOT


def test_a_bot_whose_own_threads_crowd_each_other_is_not_starved() -> None:
    """Busy children that wait for a CPU mostly behind each other (a session's share of
    a crowded machine) are a bot that wanted eight CPUs, not one the machine starved."""
    assert judge(figures(cpu_ms=60.0, run_delay_ms=1200.0, runnable=True,
                         cpu_pressure=1.0), grace_ms=5) is Blame.BOT


def test_a_runnable_bot_on_a_busy_host_was_starved_even_before_the_kernel_counted_it() -> None:
    """A thread that never got a CPU over the window shows no wait yet (the kernel
    counts it when it ends): runnable at both ends of the window on a host whose CPUs
    were in demand, it was starved."""
    never_ran = figures(cpu_ms=0.0, run_delay_ms=0.0, runnable=True, cpu_pressure=0.9)
    assert judge(never_ran, grace_ms=5) is Blame.STARVED
    assert judge(figures(cpu_ms=0.0, run_delay_ms=0.0, runnable=True, cpu_pressure=0.1),
                 grace_ms=5) is Blame.BOT
    no_pressure = figures(cpu_ms=0.0, run_delay_ms=0.0, runnable=True, load_per_cpu=3.0)
    assert judge(no_pressure, grace_ms=5) is Blame.STARVED


def test_a_bot_that_lowered_its_own_priority_is_not_starved() -> None:
    assert judge(figures(lowered_priority=True), grace_ms=5) is Blame.BOT


def test_starvation_by_another_bot_of_the_game_voids_nothing() -> None:
    """The other bots of the game burnt CPU while the seat waited: no void, so no bot
    buys one by overloading the host."""
    assert judge(figures(others_cpu_ms=250.0), grace_ms=5) is Blame.BOT


def test_the_referee_running_late_while_the_answer_waited_is_its_fault() -> None:
    late = figures(cpu_ms=5.0, run_delay_ms=0.0, referee_late_ms=80.0, answer_waiting=True)
    assert judge(late, grace_ms=5) is Blame.REFEREE_LATE
    # Late within the margin, or with no answer waiting: the bot's.
    assert judge(figures(cpu_ms=5.0, run_delay_ms=0.0, referee_late_ms=9.0,
                         answer_waiting=True), grace_ms=5) is Blame.BOT
    assert judge(figures(cpu_ms=5.0, run_delay_ms=0.0, referee_late_ms=80.0),
                 grace_ms=5) is Blame.BOT


def test_the_lateness_margin_is_the_grace_or_ten_ms() -> None:
    assert late_margin_ms(5) == 10.0
    assert late_margin_ms(50) == 50.0


def test_referee_lateness_does_not_void_a_game_whose_bots_took_the_machine() -> None:
    busy = figures(cpu_ms=300.0, run_delay_ms=0.0, others_cpu_ms=300.0,
                   referee_late_ms=80.0, answer_waiting=True)
    assert judge(busy, grace_ms=5) is Blame.BOT


def test_a_bot_whose_cpu_cannot_be_read_is_never_found_starved() -> None:
    """A remote bot: only the referee's own lateness can void its timeout."""
    assert judge(figures(cpu_ms=None, run_delay_ms=None), grace_ms=5) is Blame.BOT


def test_an_unwatched_wait_is_the_bots() -> None:
    assert judge(figures(window_ms=0.0), grace_ms=5) is Blame.BOT


def test_an_event_round_trips_through_json() -> None:
    event = InfraEvent("g1", 0, 1, "greedy", Blame.STARVED, "no answer within 100 ms",
                       figures())
    assert InfraEvent.from_json(event.to_json()) == event
    assert "starved of CPU" in event.describe()
    assert "load 9.0 per CPU" in event.describe()


def test_an_answer_late_by_less_than_its_waits_for_a_cpu_was_starved() -> None:
    """A bot that slept until just before its deadline, then waited 40 ms for a CPU and
    answered 15 ms late, would have been in time without the wait."""
    delayed = figures(cpu_ms=3.0, run_delay_ms=40.0, answer_late_ms=15.0, window_ms=120.0,
                      wait_ms=220.0)
    assert judge(delayed, grace_ms=5) is Blame.STARVED
    # Late by more than it waited: its own doing.
    assert judge(figures(cpu_ms=3.0, run_delay_ms=10.0, answer_late_ms=15.0,
                         window_ms=120.0, wait_ms=220.0), grace_ms=5) is Blame.BOT
    # A bot that lowered its priority, or crowded itself, is never starved.
    assert judge(attrs.evolve(delayed, lowered_priority=True), grace_ms=5) is Blame.BOT
    assert judge(attrs.evolve(delayed, run_delay_ms=400.0, answer_late_ms=300.0),
                 grace_ms=5) is Blame.BOT


def test_a_starved_wait_is_extended_by_the_time_the_bot_was_kept_off_the_cpu() -> None:
    """Starved over the window, the bot is credited all the time since its request that
    its processes did not run: a wait of 500 ms in which they ran 60 ms moves the
    deadline on by 440 ms."""
    starved = figures(wait_cpu_ms=60.0, wait_run_delay_ms=380.0)
    assert extension_ms(starved, grace_ms=5) == 440.0
    # Where the whole wait was not measured, the window's time off the CPU.
    assert extension_ms(figures(), grace_ms=5) == 360.0


def test_a_bot_that_got_its_cpu_is_extended_by_its_waits_for_one() -> None:
    """Not starved (it got 300 ms of CPU over 400), it still waited for a CPU: the
    deadline moves on by its waits since the request, by the kernel's count."""
    kept = figures(cpu_ms=300.0, run_delay_ms=100.0, wait_cpu_ms=330.0,
                   wait_run_delay_ms=120.0)
    assert judge(kept, grace_ms=5) is Blame.BOT
    assert extension_ms(kept, grace_ms=5) == 120.0
    assert extension_ms(figures(cpu_ms=395.0, run_delay_ms=5.0), grace_ms=5) == 5.0


def test_an_extended_wait_is_checked_again_no_sooner_than_a_quarter_of_its_deadline(
) -> None:
    assert min_extension_ms(200) == 50.0
    assert min_extension_ms(4) == MIN_EXTENSION_MS


def test_a_bot_that_buys_no_void_buys_no_extension() -> None:
    """A wait that is the bot's or the game's own doing earns nothing: the bot slept
    (no wait for a CPU), crowded itself with its own processes, lowered its priority,
    was starved by another bot of the game, or could not be measured."""
    for bots in (
        figures(cpu_ms=2.0, run_delay_ms=0.0, wait_cpu_ms=3.0, wait_run_delay_ms=0.0),
        figures(cpu_ms=790.0, run_delay_ms=900.0),
        figures(cpu_ms=60.0, run_delay_ms=1200.0, runnable=True, cpu_pressure=1.0),
        figures(lowered_priority=True),
        figures(others_cpu_ms=300.0),
        figures(cpu_ms=None, run_delay_ms=None),
    ):
        assert judge(bots, grace_ms=5) is Blame.BOT, bots
        assert extension_ms(bots, grace_ms=5) == 0.0, bots


def test_a_bot_is_charged_the_wait_less_its_extensions() -> None:
    assert charged_ms(900.0, 820.0) == 80.0
    assert charged_ms(90.0, 0.0) == 90.0
    assert charged_ms(10.0, 25.0) == 0.0


def test_an_answer_read_late_behind_a_late_referee_is_extended_by_its_lateness() -> None:
    """The answer came and the referee, kept off the CPU itself, read it late: its
    lateness is added to what the bot was kept off the CPU, beyond its margin or not."""
    read_late = figures(cpu_ms=390.0, run_delay_ms=5.0, answer_waiting=True,
                        answer_late_ms=20.0, referee_late_ms=20.0)
    assert judge(read_late, grace_ms=5) is Blame.REFEREE_LATE
    assert extension_ms(read_late, grace_ms=5) == 25.0
    slightly = attrs.evolve(read_late, run_delay_ms=1.0, answer_late_ms=2.0,
                            referee_late_ms=1.5)
    assert judge(slightly, grace_ms=5) is Blame.BOT
    assert extension_ms(slightly, grace_ms=5) == 2.5
    # Once it answered, every wait of its for a CPU is counted: those, and the
    # referee's lateness (not its time off the CPU after it answered).
    both = figures(answer_waiting=True, answer_late_ms=100.0, referee_late_ms=20.0,
                   wait_run_delay_ms=330.0, wait_cpu_ms=60.0)
    assert extension_ms(both, grace_ms=5) == 350.0
    # Not when the game's own bots took the machine.
    crowded = attrs.evolve(read_late, others_cpu_ms=300.0)
    assert extension_ms(crowded, grace_ms=5) == 0.0


def test_the_time_kept_off_the_cpu_is_the_waits_for_it_at_most_the_window() -> None:
    """Threads that wait at once overlap: at most the window; a tree that lowered its
    priority chose to yield; one still waiting after waiting half the window was
    starved: all the window it did not run is the machine's."""
    assert kept_off_ms(300.0, 1000.0, False) == 300.0
    assert kept_off_ms(5000.0, 1000.0, False) == 1000.0
    assert kept_off_ms(5000.0, 1000.0, True) == 0.0
    assert kept_off_ms(None, 1000.0, False) == 0.0
    assert kept_off_ms(600.0, 1000.0, False, cpu_ms=20.0, runnable=True) == 980.0
    assert kept_off_ms(400.0, 1000.0, False, cpu_ms=20.0, runnable=True) == 400.0
