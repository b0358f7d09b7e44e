"""The real ``taki-referee serve`` on 127.0.0.1, driven as docs/competition.md tells an
organizer and the participants: three participants upload Python, JavaScript and C bots
with the real ``submit`` client, the bots pass their checks and the ladder plays them;
a server killed with SIGKILL in the middle of a build goes on when started again."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from processes import live_children
from served import REPO, bot_folder

from referee.league.store import ResultStore

#: The installed command, as the docs have the organizer and the participants run it.
TAKI = [str(Path(sys.executable).with_name("taki-referee"))]
#: A fast competition: short moves, one deal per table.
COMPETITION = """\
[competition]
name = "end to end"

[ladder]
deals = 1
concurrency = 2

[time]
move_ms = 2000
startup_ms = 15000
"""


def taki(*args: str, cwd: Path, check: bool = True, timeout: float = 300,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*TAKI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)
    if check and done.returncode != 0:
        pytest.fail(f"taki-referee {' '.join(args)} exited {done.returncode}:\n"
                    f"{done.stdout}\n{done.stderr}")
    return done


class Server:
    """``taki-referee serve`` in a process of its own (a session of its own, so that a
    SIGKILL reaches it alone, as a crash of the machine's referee would)."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.process = subprocess.Popen(
            [*TAKI, "serve", "competition.toml", "--db", "competition.sqlite",
             "--listen", "127.0.0.1:0"],
            cwd=where, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        self.lines: list[str] = []
        self.queue: queue.Queue[str] = queue.Queue()
        self.url = self._wait_for_address()

    def _wait_for_address(self, timeout: float = 60) -> str:
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:  # the whole output, until the server's end
            assert self.process.stdout is not None
            for line in self.process.stdout:
                lines.put(line)
            lines.put("")

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=deadline - time.monotonic())
            except queue.Empty:
                break
            if not line:
                break
            self.lines.append(line)
            found = re.search(r"serving on (http://\S+)", line)
            if found:
                self.queue = lines
                return found.group(1)
        self.stop()
        pytest.fail("serve did not start:\n" + "".join(self.lines))

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=60)
        self.reader.join(timeout=10)
        while not self.queue.empty():
            self.lines.append(self.queue.get())
        return code


@pytest.fixture
def organizer(tmp_path: Path) -> Iterator[Path]:
    """A folder with competition.toml, as the docs have the organizer write it."""
    (tmp_path / "competition.toml").write_text(COMPETITION)
    yield tmp_path


def add_participant(where: Path, name: str) -> str:
    out = taki("participants", "add", name, "--db", "competition.sqlite", cwd=where).stdout
    token = out.strip().splitlines()[-1]
    assert re.fullmatch(r"[0-9a-f]{64}", token), out
    return token


def get_json(url: str, token: str | None = None, *, post: bool = False) -> Any:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    request = urllib.request.Request(url, headers=headers, method="POST" if post else "GET")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def games_stored(db: Path) -> int:
    with ResultStore(db, readonly=True) as store:
        return store.game_count()


def js_bot(where: Path) -> Path:
    source = REPO / "sample_bots" / "js"
    if not (source / "node_modules").is_dir() or shutil.which("node") is None:
        pytest.fail("the JavaScript sample bot needs node and its npm packages:"
                    " ./tasks test installs them")
    folder = where / "js-bot"
    shutil.copytree(source, folder)
    (folder / "bot.toml").write_text('name = "carol-js"\ncommand = "node bot.js"\n')
    return folder


def c_bot(where: Path) -> Path:
    folder = where / "c-bot"
    shutil.copytree(REPO / "sample_bots" / "c", folder,
                    ignore=shutil.ignore_patterns("taki_bot", "*.o"))
    (folder / "bot.toml").write_text('name = "bob-c"\ncommand = "./taki_bot"\n'
                                     'build = "make"\n')
    return folder


@pytest.mark.slow
def test_three_participants_upload_python_js_and_c_bots_and_the_ladder_plays(
        organizer: Path) -> None:
    tokens = {name: add_participant(organizer, name) for name in ("alice", "bob", "carol")}
    listed = taki("participants", "list", "--db", "competition.sqlite", cwd=organizer).stdout
    assert [line.split("\t")[0] for line in listed.splitlines()] == ["alice", "bob", "carol"]
    server = Server(organizer)
    try:
        assert any("organizer's token is in" in line for line in server.lines)
        uploads = {
            "alice": bot_folder(organizer / "py-bot", "alice-py"),
            "bob": c_bot(organizer),
            "carol": js_bot(organizer),
        }
        for who, folder in uploads.items():
            done = taki("submit", server.url, str(folder), "--token", tokens[who],
                        cwd=organizer, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "plays in the ladder" in done.stdout
        deadline = time.monotonic() + 240
        while True:  # every bot plays, and the ratings follow as games land
            ratings = {r["bot"]: r for r in get_json(f"{server.url}/api/bots")["ratings"]}
            if len(ratings) == 3 and all(r["games"] > 0 for r in ratings.values()):
                break
            assert time.monotonic() < deadline, ratings
            assert server.process.poll() is None, "".join(server.lines)
            time.sleep(1)
        assert set(ratings) == {"alice-py@1", "bob-c@1", "carol-js@1"}
        assert games_stored(organizer / "competition.sqlite") > 0
        organizer_token = (organizer / "organizer.token").read_text().strip()
        paused = get_json(f"{server.url}/api/ladder/pause", organizer_token, post=True)
        assert paused == {"paused": True}
        assert get_json(f"{server.url}/api/competition")["paused"] is True
        ratings = taki("ratings", "competition.sqlite", cwd=organizer).stdout
        for entrant in ("alice-py@1", "bob-c@1", "carol-js@1"):
            assert entrant in ratings
        # a failing upload: submit prints the step and its output, exit 1
        broken = bot_folder(organizer / "broken", "alice-broken", command="python nothing.py")
        done = taki("submit", server.url, str(broken), "--token", tokens["alice"],
                    cwd=organizer, check=False)
        assert done.returncode == 1
        assert "rejected at the step check" in done.stdout
        # the finals close submissions and play a round robin among the latest bots
        finals = taki("finals", "competition.toml", "--db", "competition.sqlite",
                      "--deals", "1", "-o", "finals.html", cwd=organizer).stdout
        assert "alice-py@1 (alice), bob-c@1 (bob), carol-js@1 (carol)" in finals
        assert (organizer / "finals.html").is_file()
        assert (organizer / "finals.json").is_file()
        assert games_stored(organizer / "competition-finals.sqlite") == 6
        done = taki("submit", server.url, str(uploads["alice"]), "--token", tokens["alice"],
                    cwd=organizer, check=False)
        assert done.returncode == 1
        assert "submissions are closed" in done.stderr
    finally:
        code = server.stop()
    assert code in (0, 130), "".join(server.lines)
    assert live_children(zombies=False) == []
    # a bot process that wrote nothing to stderr left no log: a season starts millions
    empty = [p.name for p in (organizer / "competition-files" / "logs").glob("*.log")
             if p.stat().st_size == 0]
    assert empty == []


def test_serve_refuses_to_start_without_bwrap(organizer: Path, tmp_path: Path) -> None:
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    done = taki("serve", "competition.toml", "--listen", "127.0.0.1:0", cwd=organizer,
                check=False, env={**os.environ, "PATH": str(empty)})
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "bwrap is not installed" in lines[0]


@pytest.mark.slow
def test_a_server_killed_during_a_build_builds_it_again_at_the_next_start(
        organizer: Path) -> None:
    token = add_participant(organizer, "alice")
    server = Server(organizer)
    slow = bot_folder(organizer / "slow", "slow", build="sleep 4; echo built")
    try:
        done = taki("submit", server.url, str(slow), "--token", token, "--no-wait",
                    cwd=organizer)
        assert "uploaded" in done.stdout
        deadline = time.monotonic() + 30
        status = ""
        while status != "building":
            assert time.monotonic() < deadline, status
            status = _status(organizer)
            time.sleep(0.1)
    finally:
        server.stop(signal.SIGKILL)
    time.sleep(1)
    assert live_children(zombies=False) == []
    server = Server(organizer)
    try:
        done = taki("submit", server.url, str(bot_folder(organizer / "after", "after")),
                    "--token", token, cwd=organizer)
        assert "after@1 plays in the ladder" in done.stdout
    finally:
        server.stop()
    rows = sqlite3.connect(organizer / "competition.sqlite").execute(
        "SELECT bot, version, status, attempts FROM submissions ORDER BY id").fetchall()
    # built twice (the first build was killed), stored once; then retired by the newer bot
    assert rows == [("slow", 1, "retired", 2), ("after", 1, "active", 1)], sqlite3.connect(
        organizer / "competition.sqlite").execute("SELECT output FROM submissions").fetchall()
    folders = list((organizer / "competition-files" / "uploads").iterdir())
    assert len(folders) == 2


class DroppingRelay:
    """A TCP relay on 127.0.0.1 in front of the server. The first connection's request
    goes to the server; when the server's answer begins (the upload is stored by then),
    ``on_answer`` runs (it kills the server) and the client's connection is closed
    without a byte of the answer. Later connections go to ``target``, or are closed
    while it is None (the server is starting again)."""

    def __init__(self, target: tuple[str, int], on_answer: Callable[[], None]) -> None:
        self.target: tuple[str, int] | None = target
        self.on_answer = on_answer
        self.dropped = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        target = self.target
        try:
            upstream = socket.create_connection(target, timeout=60) if target else None
        except OSError:
            upstream = None
        if upstream is None:
            client.close()
            return
        threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
        if not self.dropped.is_set():
            upstream.recv(1)  # the answer begins: the upload is stored
            self.on_answer()
            self.dropped.set()
            for end in (client, upstream):  # a shutdown, not just a close, ends the pipe
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()
            return
        self._pipe(upstream, client)

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(1 << 16):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


@pytest.mark.slow
def test_an_upload_retried_after_the_server_was_killed_before_answering_is_stored_once(
        organizer: Path) -> None:
    token = add_participant(organizer, "alice")
    server = Server(organizer)

    def kill() -> None:
        relay.target = None
        server.stop(signal.SIGKILL)

    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    relay = DroppingRelay((host, int(port)), kill)
    folder = bot_folder(organizer / "bot", "retried")
    submit = subprocess.Popen([*TAKI, "submit", relay.url, str(folder), "--token", token],
                              cwd=organizer, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        assert relay.dropped.wait(timeout=120), "the upload never reached the server"
        assert _status(organizer) != ""  # stored before its answer
        server = Server(organizer)
        host, port = server.url.removeprefix("http://").rsplit(":", 1)
        relay.target = (host, int(port))
        out, err = submit.communicate(timeout=240)
    finally:
        if submit.poll() is None:
            submit.kill()
            submit.communicate()
        relay.close()
        server.stop()
    assert submit.returncode == 0, out + err
    assert "trying again" in err
    assert "retried@1 plays in the ladder" in out
    rows = sqlite3.connect(organizer / "competition.sqlite").execute(
        "SELECT bot, version, status FROM submissions").fetchall()
    assert rows == [("retried", 1, "active")]
    assert len(list((organizer / "competition-files" / "uploads").iterdir())) == 1


def _status(where: Path) -> str:
    row = sqlite3.connect(where / "competition.sqlite").execute(
        "SELECT status FROM submissions ORDER BY id LIMIT 1").fetchone()
    return "" if row is None else str(row[0])


def test_serve_says_in_one_line_that_its_address_is_taken(organizer: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = taki("serve", "competition.toml", "--listen", f"127.0.0.1:{port}",
                    cwd=organizer, check=False, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].endswith(f"cannot listen on 127.0.0.1:{port}: Address already in use")
    assert "Traceback" not in done.stderr
    # Found before anything was made: no database, no files folder, no token.
    assert sorted(p.name for p in organizer.iterdir()) == ["competition.toml"]


@pytest.mark.slow
def test_a_second_serve_on_one_database_refuses_before_it_binds_its_port(
        organizer: Path) -> None:
    server = Server(organizer)
    try:
        with socket.socket() as probe:  # a free port, for the second server to try
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        done = taki("serve", "competition.toml", "--db", "competition.sqlite", "--listen",
                    f"127.0.0.1:{port}", cwd=organizer, check=False, timeout=60)
        assert done.returncode == 2, done.stderr
        line = done.stderr.strip().splitlines()[-1]
        assert line.endswith("competition.sqlite is in use by another taki-referee (a serve"
                             " of this competition, or a league or ladder run on it): stop"
                             " that one first, or give another --db"), done.stderr
        assert "league run" not in done.stderr and "Traceback" not in done.stderr
        with socket.socket() as again:  # the second server never held its port
            again.bind(("127.0.0.1", port))
        assert server.process.poll() is None  # the first one serves on
        get_json(server.url + "/api/bots")
    finally:
        server.stop()


def test_serve_refuses_workers_and_dask_at_once_in_one_line(organizer: Path) -> None:
    toml = organizer / "competition.toml"
    toml.write_text(toml.read_text().replace(
        "[ladder]\n", '[ladder]\nworkers = 2\ndask = "127.0.0.1:8786"\n'))
    done = taki("serve", "competition.toml", "--listen", "127.0.0.1:0", cwd=organizer,
                check=False, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "not both" in done.stderr.strip().splitlines()[-1]
    assert "Traceback" not in done.stderr
