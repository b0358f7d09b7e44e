"""Games against hostile bots: every game ends, the hostile seat forfeits with the right
reason, the other bots finish normally, replays verify and no process is left behind.

Each test runs real bot processes (tests/hostile_bots/ and sample_bots/random_bot.py)
with short time controls, so that a silent bot costs a fraction of a second.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import psutil
import pytest
import trio
from processes import live_children, processes_naming

from referee.core.clock import TimeBasis, TimeControl
from referee.core.faults import FaultReason
from referee.core.outcomes import GameOutcome, MatchSettings
from referee.core.replay import Replay, verify
from referee.core.schedule import match_games
from referee.core.specs import BotCommand, BotSpec
from referee.match.unit import play_unit
from referee.shell.process import DEFAULT_STDERR_CAP_BYTES

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parents[1] / "hostile_bots"
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
CLI = Path(sys.executable).parent / "taki-referee"

# Quick to time out a silent bot, yet long enough that an honest one never times out
# on a busy machine. Wall time: a silent bot that sleeps uses no CPU time, so under the
# CPU basis (the default) it would time out only at ten times its deadline.
FAST = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=2000, time_basis=TimeBasis.WALL)


def hostile(script: str, *args: str, name: str = "hostile") -> BotSpec:
    return BotSpec(name, BotCommand((sys.executable, str(HOSTILE / f"{script}.py"), *args)))


def random_bot(index: int) -> BotSpec:
    return BotSpec(f"random{index}", BotCommand((sys.executable, str(RANDOM_BOT), str(index))))


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    assert live_children(zombies=True) == [], "a process was running before the test"
    yield
    assert live_children(zombies=True) == [], "the test left processes behind"


async def play(
    bots: Sequence[BotSpec],
    tmp_path: Path,
    games: int = 1,
    seed: int = 1,
    **settings: object,
) -> list[GameOutcome]:
    """Play ``games`` games, with replays, and check everything that must hold whatever
    the bots did."""
    config = MatchSettings(
        time=settings.pop("time", FAST),  # type: ignore[arg-type]
        replay_dir=tmp_path / "replays",
        log_dir=tmp_path / "logs",
        **settings,  # type: ignore[arg-type]
    )
    schedule = match_games([b.name for b in bots], games, seed)
    with trio.fail_after(30):
        outcomes = await play_unit(schedule, bots, config, match_name="m")
    assert len(outcomes) == games
    for outcome in outcomes:
        assert outcome.reason in ("win", "last_standing", "limit")
        assert outcome.replay is not None
        result = verify(Replay.load(outcome.replay))
        assert [s.place for s in outcome.seats] == list(result.places)
        assert outcome.actions == result.actions
    return outcomes


def forfeits(outcome: GameOutcome) -> dict[str, tuple[FaultReason, str] | None]:
    return {seat.bot: None if seat.forfeit is None else (seat.forfeit.reason, seat.forfeit.detail)
            for seat in outcome.seats}


def seat_log(outcome: GameOutcome, bot: str) -> list[dict[str, Any]]:
    """The replay entries of ``bot``'s seat: its actions and its forfeit."""
    assert outcome.replay is not None
    seat = next(s.seat for s in outcome.seats if s.bot == bot)
    log = Replay.load(outcome.replay).log
    return [e for e in log if e.get("seat") == seat or e.get("forfeit") == seat]


def check_forfeit(outcomes: Sequence[GameOutcome], reason: str, bot: str = "hostile") -> str:
    """The hostile bot forfeited every game with ``reason``, and nobody else forfeited.
    Returns the detail of the first forfeit."""
    details = []
    for outcome in outcomes:
        seen = forfeits(outcome)
        for name, forfeit in seen.items():
            if name == bot:
                assert forfeit is not None, f"{bot} did not forfeit: {outcome}"
                assert forfeit[0] == reason, forfeit
                details.append(forfeit[1])
            else:
                assert forfeit is None, f"{name} forfeited: {forfeit}"
        places = {seat.bot: seat.place for seat in outcome.seats}
        assert places[bot] == len(outcome.seats)
    return details[0]


# ----------------------------------------------------------------------------- faults


@pytest.mark.parametrize(
    ("script", "args", "reason", "detail"),
    [
        ("exit_at_start", (), "crash", "exited with status 3"),
        ("exit_mid_game", ("3",), "crash", "exited with status 2"),
        ("sleep_forever", ("3",), "timeout", "no answer within"),
        ("garbage", ("3",), "protocol", "msgpack map"),
        ("huge_string", ("3",), "protocol", "2147483648"),
        ("extra_answer", ("1",), "protocol", "answer for request"),
        ("illegal", ("2",), "illegal", "not an index"),
        ("wrong_id", ("3",), "protocol", "answer for request"),
        ("wrong_version", (), "protocol", "protocol version"),
        ("answer_ahead", ("2",), "protocol", "sent before the"),
        ("padded_answer", ("2",), "protocol", "maximum size of 4096 bytes"),
    ],
)
async def test_hostile_bot_forfeits(
    script: str, args: tuple[str, ...], reason: str, detail: str, tmp_path: Path
) -> None:
    outcomes = await play([hostile(script, *args), random_bot(1)], tmp_path)
    text = check_forfeit(outcomes, reason)
    assert detail in text
    # Ended, not waited for: a bot that sleeps forever is no longer running once the
    # game is over.
    assert live_children(zombies=False) == []


async def test_an_answer_sent_after_game_over_forfeits_the_next_game(tmp_path: Path) -> None:
    # Each seat rotation has processes of its own: games 1 and 3 are the first rotation's,
    # 2 and 4 the second's. A process's first game is clean; the bytes it writes after
    # that game's game_over forfeit its next game.
    outcomes = await play([hostile("after_game_over"), random_bot(1)], tmp_path, games=4)
    assert [forfeits(o)["hostile"] for o in outcomes[:2]] == [None, None]
    for outcome in outcomes[2:]:
        reason, detail = forfeits(outcome)["hostile"]
        assert reason == "protocol" and "before the" in detail, detail


async def test_hostile_bot_among_three(tmp_path: Path) -> None:
    """With two other bots, the game goes on after the forfeit and ends normally."""
    bots = [random_bot(1), hostile("sleep_forever", "2"), random_bot(2)]
    outcomes = await play(bots, tmp_path, games=3)
    check_forfeit(outcomes, "timeout")
    for outcome in outcomes:
        assert outcome.reason == "win"


@pytest.mark.parametrize("mode", ["exit", "hang"])
async def test_forked_child_holding_the_pipes(mode: str, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    bot = hostile("fork_child", mode, str(pidfile), "3")
    outcomes = await play([bot, random_bot(1)], tmp_path)
    check_forfeit(outcomes, "crash" if mode == "exit" else "timeout")
    assert pidfile.read_text()  # the child was forked
    # Its command line names the pid file: no such process is left, whether the bot was
    # contained (its pid namespace gave the child another pid) or not.
    assert processes_naming(str(pidfile)) == []


async def test_stderr_flood_is_drained_and_capped(tmp_path: Path) -> None:
    time = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=5000)
    outcomes = await play([hostile("stderr_flood", "24"), random_bot(1)], tmp_path, time=time)
    assert all(f is None for f in forfeits(outcomes[0]).values())
    (log,) = (tmp_path / "logs").glob("m-hostile*.log")
    data = log.read_bytes()
    note = f"[... stderr truncated after {DEFAULT_STDERR_CAP_BYTES} bytes ...]\n".encode()
    assert data.endswith(note)
    assert len(data) <= DEFAULT_STDERR_CAP_BYTES + len(note) + 1


# ---------------------------------------------------------------------------- strikes


async def test_strikes_absorb_illegal_answers_until_the_last(tmp_path: Path) -> None:
    outcomes = await play(
        [hostile("illegal", "1"), random_bot(1)], tmp_path, fault_policy="strikes", strikes=3
    )
    check_forfeit(outcomes, "illegal")
    mine = seat_log(outcomes[0], "hostile")
    # Two default actions (strikes 1 and 2), then the third strike forfeits.
    assert len(mine) == 3
    assert "forfeit" in mine[2] and "action" in mine[0] and "action" in mine[1]


async def test_strikes_absorb_timeouts_until_the_last(tmp_path: Path) -> None:
    time = TimeControl(move_ms=100, reaction_ms=100, startup_ms=2000,
                       time_basis=TimeBasis.WALL)
    outcomes = await play(
        [hostile("sleepy", "140"), random_bot(1)],
        tmp_path,
        time=time,
        fault_policy="strikes",
        strikes=2,
    )
    check_forfeit(outcomes, "timeout")
    mine = seat_log(outcomes[0], "hostile")
    assert len(mine) == 2 and "forfeit" in mine[1]


async def test_strikes_policy_still_forfeits_a_protocol_fault(tmp_path: Path) -> None:
    outcomes = await play(
        [hostile("garbage", "2"), random_bot(1)], tmp_path, fault_policy="strikes", strikes=5
    )
    check_forfeit(outcomes, "protocol")


# ---------------------------------------------------------------------------- restart


def started_logs(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "logs").glob("m-hostile*.log"))


async def test_crashed_bot_is_restarted_for_the_next_game(tmp_path: Path) -> None:
    outcomes = await play([hostile("exit_mid_game", "2"), random_bot(1)], tmp_path, games=3)
    details = [forfeits(o)["hostile"] for o in outcomes]
    assert all(d is not None and d[0] == "crash" and "status 2" in d[1] for d in details)
    assert len(started_logs(tmp_path)) == 3  # one process per game
    for outcome in outcomes:  # each process played its two requests, then crashed
        assert [e for e in seat_log(outcome, "hostile") if "action" in e] == 2 * [ANY]


async def test_crashed_bot_is_not_restarted_when_restart_is_off(tmp_path: Path) -> None:
    outcomes = await play(
        [hostile("exit_mid_game", "2"), random_bot(1)], tmp_path, games=3, restart=False
    )
    first = check_forfeit(outcomes, "crash")
    assert len(started_logs(tmp_path)) == 1
    said = "the bot is not restarted after it stopped in an earlier game"
    for outcome in outcomes[1:]:  # forfeited before it could act
        assert forfeits(outcome)["hostile"] == ("crash", f"{said} (crash: {first})")
        assert outcome.actions == 0


async def test_handshake_fault_keeps_its_reason_on_restart(tmp_path: Path) -> None:
    outcomes = await play([hostile("wrong_version"), random_bot(1)], tmp_path, games=2)
    check_forfeit(outcomes, "protocol")
    assert len(started_logs(tmp_path)) == 2


# ---------------------------------------------------------------------------- errors


async def test_start_error_propagates_unwrapped(tmp_path: Path) -> None:
    from referee.core.faults import BotStartError

    missing = BotSpec("missing", BotCommand((str(tmp_path / "no-such-bot"),)))
    with pytest.raises(BotStartError):
        await play([missing, random_bot(1)], tmp_path)


# ----------------------------------------------------------------------------- Ctrl-C


async def test_keyboard_interrupt_propagates_unwrapped(tmp_path: Path) -> None:
    """Not inside the exception group of the nursery that hosts the bots, so that the
    command line can tell an interrupt from a crash."""

    def interrupt(outcome: GameOutcome) -> None:
        raise KeyboardInterrupt

    schedule = match_games(["random1", "random2"], 2, 0)
    with pytest.raises(KeyboardInterrupt):
        await play_unit(
            schedule, [random_bot(1), random_bot(2)], MatchSettings(time=FAST), on_game=interrupt
        )


def command_line(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:  # it has just exited
        return []


@contextlib.contextmanager
def sigint_at_its_default_in_children() -> Iterator[None]:
    """Children started meanwhile get SIGINT at its default disposition, as a terminal's
    foreground job does. A test run started as a background job of a script (``cmd &``
    in a non-interactive shell: CI runners do that) ignores SIGINT, its children inherit
    that across ``exec``, and a Python program started with SIGINT ignored keeps
    ignoring it. A handled signal, unlike an ignored one, is reset to its default by
    ``exec``."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def test_ctrl_c_stops_the_match_and_every_bot(tmp_path: Path) -> None:
    sleepy = f"python {HOSTILE / 'sleepy.py'} 100"
    with sigint_at_its_default_in_children():
        proc = subprocess.Popen(
            [str(CLI), "match", sleepy, sleepy, "--games", "20", "--log-dir", str(tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
        )
    try:
        referee = psutil.Process(proc.pid)
        deadline = time.monotonic() + 10
        bots: list[psutil.Process] = []
        guards: list[psutil.Process] = []
        # Matched on their programs: a child that is forked but not yet started still
        # has the referee's command line, which names sleepy.py too.
        sleepy_argv = [str(HOSTILE / "sleepy.py"), "100"]
        while (len(bots), len(guards)) != (2, 2) and time.monotonic() < deadline:
            time.sleep(0.05)
            children = [(p, command_line(p)) for p in referee.children()]
            # The bot's own process, or bwrap's when the bot is contained.
            bots = [p for p, argv in children if argv[-2:] == sleepy_argv]
            guards = [p for p, argv in children if "taki-referee-guard" in argv[:4]]
        assert len(bots) == 2, "the bots did not start"
        assert len(guards) == 2, "a bot has no guard"
        time.sleep(0.5)  # in the middle of a game
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err.decode(errors="replace")
    assert b"Traceback" not in err
    assert took < 5  # the match itself would run for minutes
    for process in bots + guards:
        assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE


# ----------------------------------------------------------- what the bots are told


async def test_game_fault_error_reaches_the_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Time enough, on a loaded machine, for the bot to read its error and write it down
    # before it is stopped: what counts here is that the message arrives.
    monkeypatch.setattr("referee.shell.bots.GOODBYE_MS", 10000)
    report = tmp_path / "error.txt"
    bot = hostile("report_error", "illegal", str(report))
    outcomes = await play([bot, random_bot(1)], tmp_path)
    detail = check_forfeit(outcomes, "illegal")
    assert report.read_text() == f"illegal: {detail}"


async def test_crashed_bot_stderr_stays_with_the_referee(tmp_path: Path) -> None:
    """The other bots learn how the crashed bot ended, not what it wrote to stderr; the
    result and the replay keep its last stderr lines."""
    told = tmp_path / "game_over.jsonl"
    witness = BotSpec(
        "witness",
        BotCommand((sys.executable, str(HOSTILE / "record_game_over.py"), str(told))),
    )
    outcomes = await play([hostile("exit_mid_game", "2"), witness], tmp_path)
    secret = "exit_mid_game: leaving"  # what the crashing bot writes to stderr
    detail = check_forfeit(outcomes, "crash")
    assert secret in detail
    assert secret in json.dumps(outcomes[0].to_json())  # what the results store keeps
    assert outcomes[0].replay is not None
    assert secret in outcomes[0].replay.read_text()
    (line,) = told.read_text().splitlines()
    assert secret not in line
    game_over = json.loads(line)
    forfeit = next(s["forfeit"] for s in game_over["ranking"] if s["forfeit"] is not None)
    assert forfeit == {
        "reason": "crash",
        "detail": "closed its output: the bot exited with status 2",
    }


async def test_timeout_detail_gives_the_deadline_the_bot_was_told(tmp_path: Path) -> None:
    outcomes = await play([hostile("sleep_forever", "2"), random_bot(1)], tmp_path)
    assert check_forfeit(outcomes, "timeout") == f"no answer within {FAST.move_ms} ms"


# ---------------------------------------------------------------------------- time use


async def test_every_answer_time_is_recorded_per_seat_and_in_the_replay(tmp_path: Path) -> None:
    """A bot that sleeps 150 ms of its 160 per decision is seen to: each answer of its
    seat took at least 150 ms and is a near miss; the replay keeps each action's time."""
    slow = hostile("sleepy", "150", name="slow")
    time = TimeControl(move_ms=160, reaction_ms=160, startup_ms=2000, grace_ms=200,
                       time_basis=TimeBasis.WALL)
    (outcome,) = await play([slow, random_bot(1)], tmp_path, time=time)
    seats = {seat.bot: seat for seat in outcome.seats}
    slow_use, quick_use = seats["slow"].time, seats["random1"].time
    entries = [e for e in seat_log(outcome, "slow") if "action" in e]
    assert slow_use.decisions == len(entries) > 0
    assert all(ms >= 150 for ms in slow_use.times_ms)
    assert slow_use.near_misses == slow_use.decisions
    assert [e["ms"] for e in entries] == list(slow_use.times_ms)
    assert quick_use.decisions == len([e for e in seat_log(outcome, "random1") if "action" in e])
    assert outcome.to_json()["players"][0]["time_ms"] == seats[
        outcome.seats[0].bot].time.to_json()
    for seat in outcome.seats:  # each seat's log is where its bot wrote its stderr
        assert seat.log is not None and seat.log.parent == tmp_path / "logs"
        assert seat.log.name.endswith(f"-{seat.bot}.log")


@pytest.mark.parametrize("empty_logs", [True, False])
async def test_a_bot_that_wrote_nothing_leaves_a_log_only_if_empty_logs_are_kept(
        tmp_path: Path, empty_logs: bool) -> None:
    time = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=5000)
    await play([hostile("stderr_flood", "24"), random_bot(1)], tmp_path, time=time,
               empty_logs=empty_logs)
    logs = {p.name: p.stat().st_size for p in (tmp_path / "logs").iterdir()}
    assert logs.pop("m-hostile.log") > 0  # a bot that wrote keeps its log
    assert logs == ({"m-random1.log": 0} if empty_logs else {})
