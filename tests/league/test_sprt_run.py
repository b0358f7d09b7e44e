"""SPRT regression runs with the sample bots, through the command and its exit codes."""

from __future__ import annotations

import functools
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from jsonout import strict_json
from processes import deal_memory_command, league_deal, pids_with_a_deal_twice

from referee.cli.main import main
from referee.config.bot_commands import parse_bot_arg
from referee.core.outcomes import GameOutcome, MatchSettings, SeatOutcome
from referee.league.sprt_run import EXIT_CAP, EXIT_H0, EXIT_H1, run_sprt
from referee.ratings.sprt import Sprt
from referee.rules import EndReason

REPO = Path(__file__).resolve().parents[2]
GREEDY = f"python {REPO / 'sample_bots' / 'greedy_bot.py'}"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'}"
REFEREE = Path(sys.executable).with_name("taki-referee")


def sprt(tmp_path: Path, new: str, old: str, *args: str) -> tuple[int, dict[str, Any]]:
    """Run ``taki-referee sprt`` with one worker: the seeded random bots then see the
    games in a fixed order, so every verdict below is reproducible."""
    result = subprocess.run(
        [str(REFEREE), "sprt", new, old, "--json", "--concurrency", "1",
         "--log-dir", str(tmp_path / "logs"), *args],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (EXIT_H1, EXIT_H0, EXIT_CAP), result.stderr
    return result.returncode, strict_json(result.stdout)


def test_exit_codes() -> None:
    assert (EXIT_H1, EXIT_H0, EXIT_CAP) == (0, 1, 3)


@pytest.mark.slow
def test_greedy_beats_random(tmp_path: Path) -> None:
    code, out = sprt(tmp_path, f"greedy={GREEDY}", f"random={RANDOM} 1",
                     "--elo0", "0", "--elo1", "50", "--max-games", "200", "--seed", "1")
    assert code == EXIT_H1
    assert out["result"] == "H1"
    assert out["llr"] >= out["bounds"][1]
    assert out["games"] <= 200
    assert out["elo"] > 0
    assert sum(out["pentanomial"]) == out["pairs"]
    assert out["forfeits"] == {}


@pytest.mark.slow
def test_random_is_not_stronger_than_greedy(tmp_path: Path) -> None:
    code, out = sprt(tmp_path, f"random={RANDOM} 1", f"greedy={GREEDY}",
                     "--elo0", "0", "--elo1", "50", "--max-games", "200", "--seed", "1")
    assert code == EXIT_H0
    assert out["result"] == "H0"
    assert out["llr"] <= out["bounds"][0]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_random_against_random_never_accepts_h1(tmp_path: Path, seed: int) -> None:
    code, out = sprt(tmp_path, f"{RANDOM} 1", f"{RANDOM} 2",
                     "--elo0", "0", "--elo1", "20", "--max-games", "100",
                     "--seed", str(seed))
    assert code in (EXIT_H0, EXIT_CAP)
    assert out["result"] in ("H0", "cap")
    assert out["llr"] < out["bounds"][1]
    assert out["games"] <= 100


@pytest.mark.slow
@pytest.mark.parametrize("concurrency", [1, 2])
def test_no_bot_process_plays_both_games_of_a_pair(tmp_path: Path, concurrency: int) -> None:
    log = tmp_path / "pids.log"
    result = subprocess.run(
        [str(REFEREE), "sprt", f"new={deal_memory_command(log)}",
         f"old={deal_memory_command(log)}", "--json", "--concurrency", str(concurrency),
         "--max-games", "16", "--seed", "2", "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert result.returncode in (EXIT_H1, EXIT_H0, EXIT_CAP), result.stderr
    games = strict_json(result.stdout)["games"]
    assert games >= 2 and len(log.read_text().splitlines()) == 2 * games
    assert pids_with_a_deal_twice(log, league_deal) == {}


def test_json_has_no_infinity(tmp_path: Path) -> None:
    # Every pair won: the Elo estimate and the interval's top are infinite.
    code, out = sprt(tmp_path, f"greedy={GREEDY}", f"random={RANDOM} 1",
                     "--max-games", "4", "--seed", "5")
    assert code == EXIT_CAP
    assert out["pentanomial"] == [0, 0, 0, 0, 2]
    assert out["elo"] is None
    assert out["ci95"][1] is None
    assert out["los"] == 1.0


def test_game_cap(tmp_path: Path) -> None:
    code, out = sprt(tmp_path, f"{RANDOM} 1", f"{RANDOM} 2", "--max-games", "4")
    assert code == EXIT_CAP
    assert out["result"] == "cap"
    assert out["games"] == 4 and out["pairs"] == 2


def test_text_output_and_same_names(tmp_path: Path) -> None:
    # Two bots given the same name: the second is renamed, not refused.
    result = subprocess.run(
        [str(REFEREE), "sprt", f"bot={RANDOM} 1", f"bot={RANDOM} 2", "--max-games", "2",
         "--concurrency", "1", "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )
    assert result.returncode == EXIT_CAP, result.stderr
    assert "bot vs bot-old: 2 games, 1 pairs" in result.stdout
    assert "no decision: the game cap was reached" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["--elo0", "10", "--elo1", "0"], "elo0 must be smaller than elo1"),
    (["--alpha", "0"], "alpha must be in (0, 1)"),
    (["--elo1", "inf"], "--elo1 must be between"),
    (["--max-games", "1"], "--max-games must be at least 2"),
    (["--concurrency", "0"], "--concurrency must be at least 1"),
    (["--move-ms", "0"], "move_ms must be positive"),
])
def test_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code = main(["sprt", f"{RANDOM} 1", f"{RANDOM} 2", "--log-dir", str(tmp_path), *args])
    assert code == 2
    assert message in capsys.readouterr().err


def test_missing_bot_is_not_a_verdict(tmp_path: Path) -> None:
    # Exit 1 would read as "H0 accepted" in CI: a bot that cannot start is a usage error.
    result = subprocess.run(
        [str(REFEREE), "sprt", "no-such-bot-binary", f"{RANDOM} 1",
         "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )
    assert result.returncode == 2
    assert "no-such-bot-binary" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_broken_baseline_is_not_a_verdict(tmp_path: Path) -> None:
    # OLD cannot start: without the bot check it would lose every game and NEW would
    # pass the gate (H1, exit 0).
    missing = REPO / "sample_bots" / "no_such_bot.py"
    args = [str(REFEREE), "sprt", f"new={RANDOM} 1", f"old=python {missing}", "--json",
            "--elo1", "100", "--alpha", "0.3", "--beta", "0.3", "--concurrency", "1",
            "--log-dir", str(tmp_path / "logs")]
    result = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    err = " ".join(result.stderr.split())
    assert ("OLD: bot 'old' failed the bot check: exited with status 2 before its"
            " handshake") in err
    assert f"command: {sys.executable} {missing}" in err
    assert "can't open file" in err
    assert "Traceback" not in err
    # --no-bot-check: the broken bot plays, and forfeits every game.
    result = subprocess.run([*args, "--no-bot-check"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=60)
    assert result.returncode == EXIT_H1, result.stderr
    out = strict_json(result.stdout)
    assert out["forfeits"] == {"old": {"crash": out["games"]}}


@pytest.mark.slow
def test_a_remote_baseline_that_never_joins_is_not_a_verdict(tmp_path: Path) -> None:
    # Each game would forfeit OLD at once after the first join timeout: H1 within
    # seconds. The run waits for it once, then stops as the bot check does.
    args = [str(REFEREE), "sprt", f"new={RANDOM} 1", "old=remote", "--json",
            "--listen", "127.0.0.1:0", "--tokens", str(tmp_path / "tokens"),
            "--join-timeout", "1", "--log-dir", str(tmp_path / "logs")]
    result = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "remote bot(s) old did not join within 1 s; no game was played" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_remote_baseline_that_joins_late_is_waited_for(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    referee = subprocess.Popen(
        [str(REFEREE), "sprt", f"new={GREEDY}", "old=remote", "--json",
         "--listen", "127.0.0.1:0", "--tokens", str(tokens), "--join-timeout", "60",
         "--elo1", "100", "--alpha", "0.3", "--beta", "0.3", "--max-games", "20",
         "--log-dir", str(tmp_path / "logs")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    try:
        for _ in range(300):  # the tokens file appears once the referee listens
            if tokens.exists() and tokens.read_text().strip():
                break
            time.sleep(0.05)
        token = tokens.read_text().split()[1]
        err = ""
        for _ in range(100):  # and the listening address is in its log
            line = referee.stderr.readline() if referee.stderr else ""
            err += line
            if "connect " in line and "--token" in line:
                break
        address = err.split("taki-referee connect ")[1].split()[0]
        time.sleep(1)  # join a second late: the run must still be waiting
        bot = subprocess.run(
            [str(REFEREE), "connect", address, "--token", token, "--", *RANDOM.split(), "2"],
            capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )
        out, rest = referee.communicate(timeout=120)
    finally:
        referee.kill()
    said = f"{err}{rest}\nthe remote bot (exit {bot.returncode}):\n{bot.stderr}"
    assert referee.returncode in (EXIT_H1, EXIT_H0, EXIT_CAP), said
    assert bot.returncode == 0, said
    result = strict_json(out)
    assert result["games"] >= 2 and result["forfeits"] == {}


async def test_run_sprt_in_process(tmp_path: Path) -> None:
    # Two workers share one schedule; a pair counts once both of its games are in.
    new = parse_bot_arg(f"greedy={GREEDY}", 0)
    old = parse_bot_arg(f"random={RANDOM} 3", 1)
    pairs: list[int] = []
    outcome = await run_sprt(
        new, old, Sprt(-100, 0), MatchSettings(log_dir=tmp_path / "logs"),
        max_games=80, seed=4, concurrency=2, on_pair=lambda state: pairs.append(state.pairs),
    )
    assert pairs == list(range(1, outcome.state.pairs + 1))
    assert sum(outcome.state.counts) == outcome.state.pairs
    assert 2 * outcome.state.pairs <= outcome.games <= 80
    # Which games each random bot process plays depends on how the two workers share
    # the schedule, so the run is not reproducible. The bot is some 100 Elo stronger:
    # H0 (200 Elo weaker than that) would take odds far beyond any test budget, while
    # Sprt(0, 80) sat close enough to the truth that an unlucky run once accepted H0.
    assert outcome.status in ("H1", "continue")
    assert outcome.exit_code == {"H1": EXIT_H1, "continue": EXIT_CAP}[outcome.status]
    with pytest.raises(ValueError, match="different names"):
        await run_sprt(new, new, Sprt(0, 10), MatchSettings(), max_games=2)


def test_a_pair_with_a_voided_game_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A game voided every time it was played has no result: its duplicate pair does not
    enter the test, and the outcome counts it."""

    async def fake_unit(games: Any, bots: Any, settings: Any, record: Any, *_: Any,
                        **__: Any) -> None:
        for game in games:
            if game.deal == 0 and game.rotation == 0:
                record(GameOutcome(game, (), 0, None, None, voided=True))
                continue
            seats = tuple(SeatOutcome(i, bot, 1 if bot == "new" else 2, 0)
                          for i, bot in enumerate(game.seats))
            record(GameOutcome(game, seats, 10, EndReason.WIN, None, winner=0))

    monkeypatch.setattr("referee.league.sprt_run.play_unit", fake_unit)
    new, old = parse_bot_arg("new=python a.py", 0), parse_bot_arg("old=python b.py", 1)
    outcome = trio.run(functools.partial(
        run_sprt, new, old, Sprt(0, 10), MatchSettings(), max_games=6))
    assert outcome.games == 6
    assert outcome.voided == 1
    assert outcome.state.pairs == 2  # deals 1 and 2; deal 0's pair is left out
