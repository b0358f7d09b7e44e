"""docs/ci.md's recipe, run as its workflow runs it: the gate script on a bot repository
with the bot at two commits (everything but the Actions runner itself)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.core.replay import Replay, verify

REPO = Path(__file__).resolve().parents[2]
GATE = REPO / "examples" / "ci" / "sprt-gate.sh"
WORKFLOW = REPO / "examples" / "ci" / "bot-gate.yml"
BIN = Path(sys.executable).parent

CRASHING_BOT = "import sys\nsys.exit(3)\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, capture_output=True)


def bot_repository(tmp_path: Path, old: str, new: str) -> Path:
    """A bot's repository: ``my_bot.py`` holds ``old`` at HEAD~1 and ``new`` at HEAD."""
    repo = tmp_path / "bot"
    repo.mkdir()
    git(repo, "init", "-q")
    for text in (old, new):
        (repo / "my_bot.py").write_text(text)
        git(repo, "add", "my_bot.py")
        git(repo, "commit", "-q", "-m", "bot")
    return repo


def sample(name: str) -> str:
    return (REPO / "sample_bots" / name).read_text()


def gate(repo: Path, **env: str) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    environment = {
        **inherited,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "BOT_RUN": "python {dir}/my_bot.py",
        "BOT_BUILD": "test -f my_bot.py",
        "OUT": "gate",
        **env,
    }
    return subprocess.run(["bash", str(GATE), "HEAD~1", "HEAD"], cwd=repo, env=environment,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_a_stronger_bot_passes_and_its_lost_games_are_kept(tmp_path: Path) -> None:
    repo = bot_repository(tmp_path, sample("random_bot.py"), sample("greedy_bot.py"))
    summary = tmp_path / "summary.md"
    # The random bot plays from a fixed seed (the greedy bot ignores it): with the deals'
    # seed, every game and so the verdict are the same in every run.
    result = gate(repo, MAX_GAMES="400", GITHUB_STEP_SUMMARY=str(summary),
                  BOT_RUN="python {dir}/my_bot.py 7",
                  SPRT_ARGS="--elo0 0 --elo1 100 --seed 3 --concurrency 1"
                            " --progress-interval 0")
    assert result.returncode == 0, result.stdout + result.stderr
    out = repo / "gate"
    verdict = json.loads((out / "sprt.json").read_text())
    assert verdict["result"] == "H1"
    text = (out / "summary.md").read_text()
    assert text.startswith("## SPRT HEAD vs HEAD~1: stronger: the gate passes")
    assert summary.read_text() == text  # the job's summary page on GitHub
    lost = sorted((out / "lost").glob("*.json"))
    assert 0 < len(lost) == verdict["score"]["losses"]
    for path in lost:  # exactly the games the new bot lost, each with its page
        replay = Replay.load(path)
        places = verify(replay).places
        assert places[replay.bots.index("new")] > min(places)
        assert path.with_suffix(".html").is_file()
    assert any((out / "logs").iterdir())
    assert subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.count("\n") == 1  # cleaned up


def test_a_new_bot_that_keeps_crashing_fails_the_gate(tmp_path: Path) -> None:
    repo = bot_repository(tmp_path, sample("random_bot.py"), CRASHING_BOT)
    result = gate(repo, MAX_FORFEITS="2",
                  SPRT_ARGS="--seed 3 --concurrency 1 --no-bot-check --progress-interval 0")
    assert result.returncode == 1, result.stderr
    text = (repo / "gate" / "summary.md").read_text()
    assert "stopped: new (NEW) forfeited 3 games, more than the 2 allowed" in text
    assert "forfeits of new: crash 3" in text


def test_a_bot_that_cannot_start_stops_the_gate_with_the_referees_reason(
    tmp_path: Path,
) -> None:
    repo = bot_repository(tmp_path, sample("random_bot.py"), CRASHING_BOT)
    result = gate(repo, SPRT_ARGS="--progress-interval 0")
    assert result.returncode == 2
    assert "failed the bot check" in result.stderr


def test_the_workflow_runs_the_gate_with_the_settings_it_reads() -> None:
    workflow = WORKFLOW.read_text()
    assert "bash ci/sprt-gate.sh" in workflow
    assert "actions/upload-artifact" in workflow and "path: gate/" in workflow
    script = GATE.read_text()
    for name in re.findall(r"^ {10}([A-Z_]+):", workflow, flags=re.MULTILINE):
        assert f"${{{name}" in script or f"${name}" in script, name
    docs = (REPO / "docs" / "ci.md").read_text()
    assert "examples/ci/bot-gate.yml" in docs and "examples/ci/sprt-gate.sh" in docs
