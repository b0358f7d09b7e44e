"""What operators and CI jobs read: time use, fault lines, progress off a terminal, and
the partial result of an interrupted run (each through the installed command)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from jsonout import strict_json

REPO = Path(__file__).resolve().parents[2]
GREEDY = f"python {REPO / 'sample_bots' / 'greedy_bot.py'}"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'}"
CRASHER = "python -c 'import sys; sys.exit(3)'"
REFEREE = Path(sys.executable).with_name("taki-referee")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(REFEREE), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_match_json_gives_each_seats_time_use_and_log(tmp_path: Path) -> None:
    result = run("match", f"greedy={GREEDY}", f"random={RANDOM} 1", "--games", "2",
                 "--seed", "1", "--json", "--log-dir", "logs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for game in strict_json(result.stdout)["games"]:
        for player in game["players"]:
            time = player["time_ms"]
            assert set(time) == {"decisions", "mean", "p95", "max", "near_misses"}
            assert time["decisions"] > 0
            assert 0 <= time["mean"] <= time["max"] and time["p95"] <= time["max"]
            assert (tmp_path / player["log"]).is_file()
            assert player["log"].startswith("logs/") and player["bot"] in player["log"]


@pytest.mark.slow
def test_a_bot_that_faulted_gets_a_line_with_its_reasons_and_its_log(tmp_path: Path) -> None:
    for output in ((), ("--json",)):
        result = run("match", f"greedy={GREEDY}", f"crasher={CRASHER}", "--games", "2",
                     "--no-bot-check", "--log-dir", "logs", *output, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        (line,) = [x for x in result.stderr.splitlines() if x.startswith("fault:")]
        assert line.startswith("fault: crasher forfeited 2 games: crash 2 (last: ")
        log = line.rpartition("its log: ")[2]
        assert (tmp_path / log).is_file() and "crasher" in log
        assert "greedy" not in line


@pytest.mark.slow
def test_the_table_shows_time_use(tmp_path: Path) -> None:
    result = run("match", f"greedy={GREEDY}", f"random={RANDOM} 1", "--games", "2",
                 "--log-dir", "logs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ms mean/p95/max" in result.stdout and "near" in result.stdout


@pytest.mark.slow
def test_sprt_stops_a_new_bot_that_keeps_forfeiting(tmp_path: Path) -> None:
    result = run("sprt", f"crasher={CRASHER}", f"random={RANDOM} 1", "--max-forfeits", "3",
                 "--concurrency", "1", "--no-bot-check", "--json", "--log-dir", "logs",
                 cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    out = strict_json(result.stdout)
    assert out["result"] == "forfeits"
    assert out["stopped"] == (
        "crasher (NEW) forfeited 4 games, more than the 3 allowed (--max-forfeits)"
    )
    assert out["games"] == 4 and out["forfeits"] == {"crasher": {"crash": 4}}
    assert out["score"] == {"wins": 0, "losses": 4, "draws": 0}
    text = run("sprt", f"crasher={CRASHER}", f"random={RANDOM} 1", "--max-forfeits", "0",
               "--concurrency", "1", "--no-bot-check", "--log-dir", "logs", cwd=tmp_path)
    assert text.returncode == 1
    assert "stopped: crasher (NEW) forfeited 1 games, more than the 0 allowed" in text.stdout
    assert "forfeits of crasher: crash 1" in text.stdout  # words, not a dict
    assert "fault: crasher forfeited 1 game: crash 1" in text.stderr


@pytest.mark.slow
def test_progress_lines_off_a_terminal(tmp_path: Path) -> None:
    result = run("sprt", f"{RANDOM} 1", f"{RANDOM} 2", "--max-games", "6",
                 "--concurrency", "1", "--progress-interval", "0.001", "--log-dir", "logs",
                 cwd=tmp_path)
    lines = [x for x in result.stderr.splitlines() if x.startswith("sprt: ")]
    assert lines, result.stderr
    assert "/6 games, " in lines[-1] and " games/s, " in lines[-1]
    assert "score of random_bot: " in lines[-1] and "LLR " in lines[-1]
    quiet = run("sprt", f"{RANDOM} 1", f"{RANDOM} 2", "--max-games", "2",
                "--concurrency", "1", "--progress-interval", "0", "--log-dir", "logs",
                cwd=tmp_path)
    assert not [x for x in quiet.stderr.splitlines() if x.startswith("sprt: ")]


def interrupt_after_progress(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """Start the command, send SIGTERM once it printed its first progress line, and
    return its exit status, standard error and standard output."""
    proc = subprocess.Popen(
        [str(REFEREE), *args, "--progress-interval", "0.001", "--log-dir", "logs"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stderr is not None
    seen = []
    try:
        for line in proc.stderr:
            seen.append(line)
            if " games, " in line:
                proc.send_signal(signal.SIGTERM)
                break
        out, rest = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    return proc.returncode, "".join(seen) + rest, out


@pytest.mark.slow
def test_an_interrupted_sprt_prints_where_the_test_stood(tmp_path: Path) -> None:
    code, err, _ = interrupt_after_progress(
        tmp_path, "sprt", f"{RANDOM} 1", f"{RANDOM} 2", "--max-games", "100000",
        "--concurrency", "1")
    assert code == 130, err
    partial = [x for x in err.splitlines() if x.startswith("partial result: ")]
    assert len(partial) == 1, err
    assert "score of random_bot: " in partial[0] and "LLR " in partial[0]


@pytest.mark.slow
def test_an_interrupted_match_prints_the_games_played(tmp_path: Path) -> None:
    code, err, out = interrupt_after_progress(
        tmp_path, "match", f"a={RANDOM} 1", f"b={RANDOM} 2", "--games", "100000")
    assert code == 130, err
    assert "partial result: " in err and " of 100000 games were played" in err
    assert "Match results" in err
    assert out == ""


@pytest.mark.slow
def test_an_interrupted_match_with_json_prints_json_of_the_games_played(
        tmp_path: Path) -> None:
    code, err, out = interrupt_after_progress(
        tmp_path, "match", f"a={RANDOM} 1", f"b={RANDOM} 2", "--games", "100000",
        "--seed", "4", "--json")
    assert code == 130, err
    result = strict_json(out)
    assert result["interrupted"] is True and result["seed"] == 4
    played = int(err.split("partial result: ")[1].split(" of ")[0])
    assert len(result["games"]) == played > 0
    assert all(p["forfeit"] is None for g in result["games"] for p in g["players"])


@pytest.mark.slow
def test_a_match_interrupted_in_its_bot_check_still_prints_json(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [str(REFEREE), "match", "python -c 'import time; time.sleep(60)'", f"{RANDOM} 1",
         "--seed", "9", "--json", "--log-dir", "logs"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stderr is not None
    try:
        for line in proc.stderr:  # the seed line comes before the bot check
            if line.startswith("master seed 9"):
                proc.send_signal(signal.SIGTERM)
                break
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert strict_json(out) == {"seed": 9, "interrupted": True, "games": [], "voided": 0,
                                "void_plays": 0}
