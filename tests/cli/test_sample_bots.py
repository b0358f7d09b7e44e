"""Every sample bot plays whole games through the real referee, and every replay verifies.

The JavaScript and C bots are built on demand (``npm ci``, ``make``); a failed build
fails these tests rather than skipping them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jsonout import strict_json

from referee.core.replay import Replay, replay_states
from referee.rules import GameState, cards

# Every test here plays or checks the sample bots in every language, as processes.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
BOTS_DIR = REPO / "sample_bots"
OPPONENT = "opponent=python sample_bots/random_bot.py 7"

# Generous limits: these tests check the conversation, not the speed of a loaded machine.
TIME_ARGS = ["--move-ms", "5000", "--reaction-ms", "5000", "--startup-ms", "20000"]


def referee_command() -> list[str]:
    script = Path(sys.executable).parent / "taki-referee"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "referee.cli"]


def build(argv: list[str], cwd: Path, what: str) -> None:
    tool = shutil.which(argv[0])
    if tool is None:
        pytest.fail(f"{argv[0]} is needed to build the {what} but is not on PATH")
    try:
        proc = subprocess.run(
            [tool, *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=300
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"building the {what} timed out: {' '.join(argv)}")
    if proc.returncode != 0:
        pytest.fail(
            f"building the {what} failed: {' '.join(argv)} (exit {proc.returncode})\n"
            f"{proc.stdout}\n{proc.stderr}"
        )


@pytest.fixture(scope="session")
def js_bot() -> str:
    if shutil.which("node") is None:
        pytest.fail("node is needed for the JavaScript sample bot but is not on PATH")
    bot_dir = BOTS_DIR / "js"
    installed = bot_dir / "node_modules" / ".package-lock.json"
    lock = bot_dir / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        build(["npm", "ci", "--no-audit", "--no-fund"], bot_dir, "JavaScript sample bot")
    return "js=node sample_bots/js/bot.js"


@pytest.fixture(scope="session")
def c_bot() -> str:
    # make rebuilds only when taki_bot.c changed, so this is cheap when up to date.
    build(["make", "-s", "-C", str(BOTS_DIR / "c")], REPO, "C sample bot")
    assert (BOTS_DIR / "c" / "taki_bot").exists()
    return "c=sample_bots/c/taki_bot"


PYTHON_BOTS = {
    "random": "random=python sample_bots/random_bot.py 3",
    "greedy": "greedy=python sample_bots/greedy_bot.py",
    # 20 ms a decision: the search's strength is measured by benchmarks/ismcts.py.
    "ismcts": "ismcts=python sample_bots/ismcts_bot.py 20 3",
}


@pytest.fixture(params=["random", "greedy", "ismcts", "js", "c"])
def sample_bot(request: pytest.FixtureRequest) -> str:
    if request.param in PYTHON_BOTS:
        return PYTHON_BOTS[request.param]
    return str(request.getfixturevalue(f"{request.param}_bot"))


def play_match(
    bots: list[str], games: int, tmp_path: Path, rules: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    replays = tmp_path / "replays"
    proc = subprocess.run(
        [
            *referee_command(), "match", *bots,
            "--games", str(games), "--json",
            "--replay-dir", str(replays), "--log-dir", str(tmp_path / "logs"),
            *TIME_ARGS, *rules,
        ],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result: list[dict[str, Any]] = strict_json(proc.stdout)["games"]
    assert len(result) == games
    return result


def check_games(games: list[dict[str, Any]], names: set[str], tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for game in games:
        players = {p["bot"]: p for p in game["players"]}
        assert set(players) == names, game
        for name, player in players.items():
            log = "".join(p.read_text(errors="replace") for p in logs.glob(f"*-{name}.log"))
            assert player["forfeit"] is None, f"{name} forfeited: {player['forfeit']}\n{log}"
        assert game["end"] in ("win", "limit"), game
        assert sorted(p["place"] for p in game["players"])[0] == 1
        assert game["replay"] is not None
    files = [game["replay"] for game in games]
    verify = subprocess.run(
        [*referee_command(), "replay", "verify", *files],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert verify.stdout.count("ok") == len(files), verify.stdout


def test_sample_bot_plays_heads_up(sample_bot: str, tmp_path: Path) -> None:
    games = play_match([sample_bot, OPPONENT], 4, tmp_path)
    name = sample_bot.partition("=")[0]
    check_games(games, {name, "opponent"}, tmp_path)
    # Every game of the match is dealt and seated afresh: both seats were played.
    assert {p["seat"] for g in games for p in g["players"] if p["bot"] == name} == {0, 1}


def test_all_sample_bots_at_one_table(js_bot: str, c_bot: str, tmp_path: Path) -> None:
    bots = [PYTHON_BOTS["random"], PYTHON_BOTS["greedy"], js_bot, c_bot]
    games = play_match(bots, 4, tmp_path)
    check_games(games, {"random", "greedy", "js", "c"}, tmp_path)
    seats = {(p["bot"], p["seat"]) for g in games for p in g["players"]}
    assert len(seats) == 16  # four rotations: every bot sat in every seat


VARIANTS = {
    "crazy_card": ("--flag", "crazy_card=true"),
    "plus3_rule": ("--rules", "super-taki-classic", "--flag", "plus3_rule=true"),
    "pyramid": ("--flag", "pyramid=true"),
    "voluntary_draw": ("--flag", "voluntary_draw=true"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_all_sample_bots_play_every_variant(
    variant: str, js_bot: str, c_bot: str, tmp_path: Path
) -> None:
    bots = [PYTHON_BOTS["random"], PYTHON_BOTS["greedy"], js_bot, c_bot]
    games = play_match(bots, 2, tmp_path, VARIANTS[variant])
    check_games(games, {"random", "greedy", "js", "c"}, tmp_path)
    check_variant(variant, games)


def every_card(state: GameState) -> Counter[int]:
    """Every card of a game: the draw pile, the discard pile and the hands."""
    held = (card for seat in range(state.players) for card in state.hand(seat))
    return Counter([*state.draw_pile, *state.discard, *held])


def check_variant(variant: str, games: list[dict[str, Any]]) -> None:
    """The variant was in effect in every game, as its replay shows: its flag is in the
    game's rules, and whatever it must change in any finished game did change."""
    for game in games:
        replay = Replay.load(Path(game["replay"]))
        assert getattr(replay.rules, variant) is True, replay.rules
        end = replay_states(replay)
        if variant == "crazy_card":
            dealt = every_card(replay.new_game())
            assert (dealt.total(), dealt[cards.CRAZY]) == (118, 2)
            assert every_card(end) == dealt  # the game played with that deck
        elif variant == "plus3_rule":
            assert replay.rules.deck == "super-taki-classic"
        elif variant == "pyramid":
            assert replay.result is not None and replay.result["stages"] is not None
            if game["end"] == "win":  # the winner went down every stage to the last
                stages = [e[2] for e in end.events if e[0] == "stage" and e[1] == end.winner]
                assert stages == list(range(replay.rules.hand_size - 1, 0, -1)), end.events


@pytest.mark.parametrize("mode", [[], ["--processes"]])
def test_greedy_vs_random_benchmark_runs(mode: list[str]) -> None:
    """A smoke run of benchmarks/greedy_vs_random.py on a handful of games: it plays them
    and ends with its figure line (the win rate itself is the benchmark's business)."""
    proc = subprocess.run(
        [sys.executable, "benchmarks/greedy_vs_random.py", "--games", "4", "--seed", "1", *mode],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("greedy vs random, 4 heads-up games in 2 duplicate pairs")
    assert re.fullmatch(r"win_rate=[01]\.\d{3}", lines[-1]), proc.stdout


def test_sample_bot_passes_check(sample_bot: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [*referee_command(), "check", sample_bot, "--json", "--log-dir", str(tmp_path / "logs"),
         *TIME_ARGS],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    [report] = strict_json(proc.stdout)["bots"]
    failures = [(o["name"], o["problem"], o["fault"]) for o in report["outcomes"]
                if not o["passed"]]
    assert proc.returncode == 0 and report["passed"], failures
