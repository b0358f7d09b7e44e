"""Every starter kit, copied out as a participant gets it (``taki-referee kit``): two
copies of its ``./bot`` started at once on the fresh kit both answer ``hello`` (one
builds while the other waits for its lock) and leave no temporary build directory,
``check`` passes, and 200 games against the random bot (2 to 4 seats, both presets, the
variant flags) end without a forfeit.

The kits' toolchains come from Debian (``./tasks test`` installs them); a missing one
fails these tests rather than skipping them. How long each kit's first build took is
printed (``-s`` shows it): the figure goes in the CI budget, not in an assertion.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
from jsonout import strict_json

from referee.cli import kit as kit_module
from referee.cli.kit import KITS_DIR, kit_names

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = f"python {REPO / 'sample_bots' / 'random_bot.py'}"
KITS = ["cpp", "csharp", "go", "java", "javascript", "python", "rust", "typescript"]
#: A first build (Rust compiles serde's derive macros) on a loaded two-core machine.
FIRST_BUILD_S = 900
#: 200 games: (games, extra random bots, rules options).
MATCHES: list[tuple[int, int, list[str]]] = [
    (80, 1, []),
    (40, 2, ["--rules", "super-taki-classic"]),
    (40, 3, ["--flag", "crazy_card=true", "--flag", "plus3_rule=true",
             "--flag", "voluntary_draw=true", "--flag", "last_card_penalty=2"]),
    (40, 2, ["--flag", "pyramid=true", "--flag", "hand_size=3"]),
]
# Generous limits: these tests check the conversation, not the speed of a loaded machine.
TIME_ARGS = ["--move-ms", "5000", "--reaction-ms", "5000", "--startup-ms", "30000"]


def referee(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "taki-referee"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "referee.cli"]
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def test_every_kit_is_tested() -> None:
    assert kit_names() == KITS


def test_kit_copies_the_sources_without_build_output(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    kits = tmp_path / "kits"
    shutil.copytree(KITS_DIR / "go", kits / "go")
    for built in ("build", "node_modules", ".venv", "target", ".build-tmp.x1y2z3"):
        (kits / "go" / built).mkdir()  # what a ./bot run in the tree leaves
    (kits / "go" / ".build.lock").touch()
    monkeypatch.setattr(kit_module, "KITS_DIR", kits)
    kit_module.copy_kit("go", tmp_path / "mine")
    copied = {p.relative_to(tmp_path / "mine").as_posix()
              for p in (tmp_path / "mine").rglob("*")}
    assert copied == {"bot", "README.md", "go.mod", "main.go", "strategy.go", "protocol.go",
                      "bot.toml", ".submitignore"}
    assert os.access(tmp_path / "mine" / "bot", os.X_OK)


@pytest.mark.parametrize(("args", "message"), [
    (["cobol", "x"], "no starter kit for 'cobol' (there are: cpp, csharp, go,"),
    (["java", "taken"], "exists and is not an empty directory"),
    (["java"], "kit needs a DIR"),
])
def test_kit_refuses_in_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine\n")
    proc = referee("kit", *args, cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine\n"


def test_kit_lists_the_kits(tmp_path: Path) -> None:
    proc = referee("kit", "--list", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.split() == KITS


def test_kit_says_what_to_do_next(tmp_path: Path) -> None:
    proc = referee("kit", "python", "mine", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mine/bot --build" in proc.stdout
    assert "taki-referee check" in proc.stdout


def handshake(bots: list[subprocess.Popen[bytes]], timeout_s: float) -> list[dict[str, Any]]:
    """Send hello to every bot and read each one's first message."""
    hello = msgpack.packb({"type": "hello", "protocol": 1, "referee": "kit-test"})
    unpackers = {}
    for bot in bots:
        assert bot.stdin is not None and bot.stdout is not None
        bot.stdin.write(hello)
        bot.stdin.flush()
        unpackers[bot.stdout.fileno()] = msgpack.Unpacker(raw=False)
    replies: dict[int, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout_s
    while len(replies) < len(bots) and time.monotonic() < deadline:
        waiting = [fd for fd in unpackers if fd not in replies]
        ready, _, _ = select.select(waiting, [], [], 1.0)
        for fd in ready:
            data = os.read(fd, 4096)
            assert data, "a bot closed its output before bot_hello"
            unpackers[fd].feed(data)
            for message in unpackers[fd]:
                replies[fd] = message
                break
    assert len(replies) == len(bots), f"no bot_hello within {timeout_s} s"
    return list(replies.values())


def first_use_by_two(kit: Path) -> float:
    """Start two ./bot at once on a kit that was never built; both must answer hello
    once it is built. Returns the time that took."""
    began = time.monotonic()
    with open(kit / "first-use.log", "wb") as log:
        bots = [subprocess.Popen(["./bot"], cwd=kit, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=log) for _ in range(2)]
        try:
            replies = handshake(bots, FIRST_BUILD_S)
            seconds = time.monotonic() - began
            for reply in replies:
                assert reply["type"] == "bot_hello" and reply["protocol"] == 1, reply
            for bot in bots:
                assert bot.stdin is not None
                bot.stdin.write(msgpack.packb({"type": "shutdown"}))
                bot.stdin.close()
            for bot in bots:
                assert bot.wait(timeout=30) == 0
        finally:
            for bot in bots:
                if bot.poll() is None:
                    bot.kill()
                    bot.wait()
    return seconds


@pytest.mark.slow
@pytest.mark.parametrize("language", KITS)
def test_kit_builds_once_passes_check_and_plays_200_games(language: str, tmp_path: Path,
                                                          ) -> None:
    kit = tmp_path / language
    proc = referee("kit", language, str(kit), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    try:
        seconds = first_use_by_two(kit)
    except AssertionError:
        print((kit / "first-use.log").read_text(errors="replace"), file=sys.stderr)
        raise
    print(f"\n{language}: first use (build and handshake) {seconds:.1f} s")
    assert not list(kit.glob(".build-tmp.*")), "a build left its temporary directory"

    logs = tmp_path / "logs"
    checked = referee("check", f"{language}=./bot", "--json", "--log-dir", str(logs),
                      cwd=kit)
    report = strict_json(checked.stdout)
    failures = [(o["name"], o["problem"]) for o in report["bots"][0]["outcomes"]
                if not o["passed"]]
    assert checked.returncode == 0 and not failures, failures

    for games, randoms, rules in MATCHES:
        others = [f"random{i}={RANDOM_BOT} {i}" for i in range(randoms)]
        played = referee("match", f"{language}=./bot", *others, "--games", str(games),
                         "--seed", "31", "--json", "--log-dir", str(logs), *TIME_ARGS,
                         *rules, cwd=kit)
        assert played.returncode == 0, played.stderr
        results = strict_json(played.stdout)["games"]
        assert len(results) == games
        forfeits = [(g["game_id"], p["bot"], p["forfeit"]) for g in results
                    for p in g["players"] if p["forfeit"] is not None]
        assert not forfeits, (rules, forfeits)
