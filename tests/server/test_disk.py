"""A full disk pauses the competition, never stops it: the real ``taki-referee serve``
with its files on a small tmpfs (mounted here, as root) that is then filled. The
ladder pauses, uploads are refused with 507, the API and the pages go on answering,
and the ladder goes on by itself once space returns; a replay that cannot be written
stops the games in flight, not the server."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from served import bot_folder
from test_abuse import request
from test_serve import Server, add_participant, games_stored, get_json, taki

#: Each test fills a disk under a playing ladder: minutes on a loaded machine.
pytestmark = pytest.mark.slow

COMPETITION = """\
[competition]
name = "full disk"
files = "files"

[ladder]
concurrency = 2

[submissions]
min_free_mb = {reserve}

[time]
move_ms = 2000
startup_ms = 15000
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    files = tmp_path / "files"
    files.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m,mode=0711", "tmpfs",
                    str(files)], check=True)
    try:
        yield files
    finally:
        subprocess.run(["umount", "-l", str(files)], check=False)


def fill(disk: Path) -> Path:
    """Fill the disk to its last byte with one file."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as out:
        for chunk in (1 << 20, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    out.write(b"\xff" * chunk)
    return filler


def wait_for(what: str, check: Any, server: Server, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what}:\n{''.join(server.lines[-30:])}"
        assert server.process.poll() is None, "".join(server.lines)
        time.sleep(0.5)


def start(tmp_path: Path, reserve: int) -> tuple[Server, dict[str, str]]:
    (tmp_path / "competition.toml").write_text(COMPETITION.format(reserve=reserve))
    tokens = {name: add_participant(tmp_path, name) for name in ("alice", "bob")}
    server = Server(tmp_path)
    for who in tokens:
        done = taki("submit", server.url, str(bot_folder(tmp_path / who, f"{who}-bot")),
                    "--token", tokens[who], cwd=tmp_path, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    db = tmp_path / "competition.sqlite"
    wait_for("games", lambda: games_stored(db) >= 2, server)
    return server, tokens


def test_a_disk_below_its_reserve_pauses_the_ladder_and_uploads_get_507(
        tmp_path: Path, small_disk: Path) -> None:
    server, tokens = start(tmp_path, reserve=8)
    db = tmp_path / "competition.sqlite"
    try:
        filler = fill(small_disk)
        wait_for("a pause", lambda: get_json(f"{server.url}/api/competition")["disk_full"],
                 server)
        competition = get_json(f"{server.url}/api/competition")
        assert competition["paused"] is True
        status, _, text = request(f"{server.url}/api/submissions", token=tokens["alice"],
                                  body=b"anything")
        assert status == 507 and b"disk is full" in text
        done = taki("submit", server.url, str(bot_folder(tmp_path / "late", "late")),
                    "--token", tokens["alice"], "--no-wait", cwd=tmp_path, check=False)
        assert done.returncode != 0 and "disk is full" in done.stderr
        assert "trying again" not in done.stderr  # said once: no retry finds room
        for path in ("/", "/api/bots", "/games/1"):
            assert request(f"{server.url}{path}")[0] == 200, path
        time.sleep(3)  # the games in flight land; then nothing more
        stored = games_stored(db)
        time.sleep(5)
        assert games_stored(db) == stored
        filler.unlink()
        wait_for("the ladder resumes",
                 lambda: not get_json(f"{server.url}/api/competition")["paused"], server)
        wait_for("new games", lambda: games_stored(db) > stored, server)
    finally:
        server.stop()
    assert not any("Traceback" in line for line in server.lines), server.lines


def test_a_replay_that_cannot_be_written_stops_the_games_not_the_server(
        tmp_path: Path, small_disk: Path) -> None:
    server, _ = start(tmp_path, reserve=0)  # no reserve: the writes themselves fail
    db = tmp_path / "competition.sqlite"
    try:
        filler = fill(small_disk)
        wait_for("a failed write", lambda: any(
            "the disk is full" in line for line in server.lines + list(server.queue.queue)),
            server)
        assert request(f"{server.url}/")[0] == 200
        assert get_json(f"{server.url}/api/competition")["disk_full"] is True
        stored = games_stored(db)
        filler.unlink()
        wait_for("new games", lambda: games_stored(db) > stored, server)
        assert get_json(f"{server.url}/api/competition")["disk_full"] is False
    finally:
        server.stop()
    assert not any("Traceback" in line for line in server.lines), server.lines
