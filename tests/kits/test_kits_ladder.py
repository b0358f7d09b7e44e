"""Every starter kit enters a competition's ladder as shipped, as its README's "Submit"
section says: copied out with ``taki-referee kit``, its npm packages installed where the
README says so (the server's build has no network), then uploaded with the real
``submit`` to a real ``serve`` whose ladder is already playing (the greedy sample bot, and
the ISMCTS one made ready as sample_bots/README.md says). Each is built and checked
in the sandbox, enters the ladder and plays games there.

Slow (``-m slow``): eight builds and checks on the server, a Rust build among them."""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from processes import live_children
from served import REPO

from referee.cli.kit import kit_names

pytestmark = pytest.mark.slow

TAKI = [str(Path(sys.executable).with_name("taki-referee"))]
COMPETITION = """\
[competition]
name = "the kits"

[ladder]
deals = 1
concurrency = 2

[submissions]
concurrent_builds = 2

[sandbox]
build_seconds = 1200               # a C++ or Rust build beside a playing ladder, under load
check_seconds = 1200

[time]
move_ms = 2000
startup_ms = 20000
time_basis = "cpu"                 # a loaded machine's delays are not the bots' time
"""
#: The kits that install npm packages before an upload (README: "Submit").
NPM_KITS = ("javascript", "typescript")
#: Eight builds and checks beside a playing ladder on a loaded two-core machine.
ALL_IN_S = 3600


def taki(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TAKI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def get_json(url: str, token: str) -> Any:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


class Serve:
    """``taki-referee serve`` in a session of its own, its output kept."""

    def __init__(self, where: Path) -> None:
        self.process = subprocess.Popen(
            [*TAKI, "serve", "competition.toml", "--db", "competition.sqlite",
             "--listen", "127.0.0.1:0"],
            cwd=where, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self._address()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def _address(self) -> str:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            self.seen.append(line)
            found = re.search(r"serving on (http://\S+)", line)
            if found:
                return found.group(1)
        self.stop()
        pytest.fail("serve did not start:\n" + "".join(self.seen))

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=120)


def participant(where: Path, name: str) -> str:
    done = taki("participants", "add", name, "--db", "competition.sqlite", cwd=where)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def copied_kit(language: str, where: Path) -> Path:
    """The kit as its README has a participant make it ready to submit."""
    folder = where / f"my-{language}-bot"
    done = taki("kit", language, str(folder), cwd=where)
    assert done.returncode == 0, done.stderr
    if language in NPM_KITS:  # the server's build has no network: node_modules goes up
        built = subprocess.run(["./bot", "--build"], cwd=folder, capture_output=True,
                               text=True, timeout=900)
        assert built.returncode == 0, built.stderr
    return folder


def ismcts_folder(where: Path) -> Path:
    """The lines of sample_bots/README.md that make the ISMCTS bot's folder, run in
    ``where`` (the repository's sample_bots and referee linked in)."""
    readme = (REPO / "sample_bots" / "README.md").read_text()
    block = readme.split("<!-- submit-ismcts", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if not line.startswith("taki-referee")]
    for name in ("sample_bots", "referee"):
        (where / name).symlink_to(REPO / name)
    subprocess.run(["bash", "-euc", "\n".join(lines)], cwd=where, check=True, timeout=60)
    return where / "ismcts"


def test_every_kit_enters_a_playing_ladder_as_shipped(tmp_path: Path) -> None:
    (tmp_path / "competition.toml").write_text(COMPETITION)
    tokens = {name: participant(tmp_path, name) for name in ("house", *kit_names())}
    folders = {kit: copied_kit(kit, tmp_path) for kit in kit_names()}
    server = Serve(tmp_path)
    try:
        assert any("the sandbox's builds and bots find: python" in line
                   for line in server.seen), "".join(server.seen)
        # The ladder is playing before the kits arrive: the greedy and the ISMCTS sample
        # bots, the latter made ready as sample_bots/README.md says.
        greedy = tmp_path / "greedy"
        greedy.mkdir()
        (greedy / "greedy_bot.py").write_text((REPO / "sample_bots" / "greedy_bot.py").read_text())
        (greedy / "bot.toml").write_text('name = "greedy"\ncommand = "python greedy_bot.py"\n')
        for folder in (greedy, ismcts_folder(tmp_path)):
            done = taki("submit", server.url, str(folder), "--token", tokens["house"],
                        cwd=tmp_path)
            assert done.returncode == 0, done.stdout + done.stderr
        ids = {}
        for kit, folder in folders.items():
            done = taki("submit", server.url, str(folder), "--token", tokens[kit], "--no-wait",
                        cwd=tmp_path)
            assert done.returncode == 0, done.stdout + done.stderr
            ids[kit] = int(re.search(r"submission (\d+)", done.stdout).group(1))  # type: ignore[union-attr]
        deadline = time.monotonic() + ALL_IN_S
        playing: set[str] = set()
        rejected: dict[str, str] = {}
        while len(playing) + len(rejected) < len(folders):
            assert time.monotonic() < deadline, f"not playing after {ALL_IN_S} s: " \
                f"{sorted(set(folders) - playing)}; rejected: {rejected}"
            time.sleep(5)
            for kit, sub_id in ids.items():
                sub = get_json(f"{server.url}/api/submissions/{sub_id}", tokens[kit])
                sub = sub["submission"]
                if sub["status"] == "rejected":
                    rejected[kit] = f"{sub['step']}:\n{sub['output']}"
            ratings = get_json(f"{server.url}/api/bots", tokens["house"])["ratings"]
            played = {r["bot"].split("@")[0] for r in ratings if r["games"] > 0}
            playing = {kit for kit in folders if f"{kit}-bot" in played}
        assert not rejected, "\n\n".join(f"{kit}: {why}" for kit, why in rejected.items())
        assert playing == set(folders)
    finally:
        code = server.stop()
    assert code in (0, 130)
    assert live_children(zombies=False) == []
