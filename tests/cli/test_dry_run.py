"""``taki-referee submit --dry-run PATH``: the server's unpacking, build and check on this
machine, printing what the server would say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from served import REPO

TAKI = [str(Path(sys.executable).with_name("taki-referee"))]


def dry_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TAKI, "submit", "--dry-run", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=1200)


def folder(where: Path, manifest: str, files: dict[str, str]) -> Path:
    where.mkdir()
    (where / "bot.toml").write_text(manifest)
    for name, text in files.items():
        (where / name).write_text(text)
    return where


def test_a_bad_manifest_is_refused_as_the_server_refuses_it(tmp_path: Path) -> None:
    bot = folder(tmp_path / "bot", 'name = "b"\ncommand = "python bot.py"\nlang = "py"\n',
                 {"bot.py": ""})
    done = dry_run(str(bot), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "the server would refuse the upload: bot.toml: unknown key 'lang'" in done.stdout


def test_a_failed_build_shows_its_output(tmp_path: Path) -> None:
    bot = folder(tmp_path / "bot", 'name = "b"\ncommand = "./b"\n'
                 'build = "echo compiling; echo no compiler here >&2; exit 3"\n', {})
    done = dry_run("http://127.0.0.1:9", str(bot), cwd=tmp_path)  # the URL is not used
    assert done.returncode == 1, done.stderr
    out = done.stdout.splitlines()
    assert out[0].startswith(f"dry run: {bot} (")
    assert out[1].startswith("the sandbox's builds and bots find: python (the referee's")
    assert "the server would reject it at the step build:" in out
    assert "compiling" in out and "no compiler here" in out
    assert any(line.startswith("build: failed (exit status 3;") for line in out)


@pytest.mark.slow
def test_a_crashing_bot_is_rejected_with_its_stderr(tmp_path: Path) -> None:
    bot = folder(tmp_path / "bot", 'name = "b"\ncommand = "python bot.py"\n',
                 {"bot.py": "import sys\nprint('cannot find strategy.py', file=sys.stderr)\n"
                            "sys.exit(1)\n"})
    done = dry_run(str(bot), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "the server would reject it at the step check:" in done.stdout
    assert "FAIL handshake: failed (crash)" in done.stdout
    assert "scenarios not played: the bot failed its handshake" in done.stdout
    assert "  | cannot find strategy.py" in done.stdout


@pytest.mark.slow
def test_a_sound_bot_would_be_accepted(tmp_path: Path) -> None:
    bot = folder(tmp_path / "bot", 'name = "greedy"\ncommand = "python greedy_bot.py"\n',
                 {"greedy_bot.py": (REPO / "sample_bots" / "greedy_bot.py").read_text()})
    done = dry_run(str(bot), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the server would accept it: greedy would play in the ladder" in done.stdout
    assert re.search(r"^check: (\d+) of \1 scenarios passed$", done.stdout, re.MULTILINE)


def test_the_toolchains_line_names_what_is_there_and_what_is_not() -> None:
    from referee.cli.toolchains import TOOLS, describe_toolchains

    line = describe_toolchains({"node": "/usr/bin/node", "go": "/usr/bin/go"})
    assert line.startswith("the sandbox's builds and bots find: python (the referee's 3.")
    assert ", node (/usr/bin/node), go (/usr/bin/go); not there: " in line
    assert line.endswith(", ".join(t for t in TOOLS if t not in ("node", "go")))
