"""What a hostile participant or outsider tries against the real ``taki-referee serve`` on
127.0.0.1, with the real ``submit``: odd names, archives the file system or zipfile
cannot take, uploads cut short, floods of requests and of uploads. Each is refused in
one line with a 4xx (never a 500 or a traceback), before any work it does not deserve;
every answer carries the security headers; the files are private."""

from __future__ import annotations

import io
import socket
import stat
import tarfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest
from served import bot_folder
from test_serve import Server, add_participant, taki

#: Each test starts a server process of its own.
pytestmark = pytest.mark.slow

COMPETITION = """\
[competition]
name = "abuse"
requests_per_second = 5
request_burst = 30

[ladder]
concurrency = 1

[submissions]
max_pending = 1
concurrent_uploads = 2

[time]
move_ms = 2000
startup_ms = 15000
"""
HEADERS = ("x-content-type-options", "referrer-policy", "x-frame-options",
           "content-security-policy")


@pytest.fixture
def hosted(tmp_path: Path) -> Any:
    (tmp_path / "competition.toml").write_text(COMPETITION)
    tokens = {name: add_participant(tmp_path, name) for name in ("alice", "bob", "carol")}
    replays = tmp_path / "competition-files" / "replays"
    replays.mkdir(parents=True)
    (replays / ".game.json.x1y2.tmp").write_bytes(b"half a replay")  # a kill's leftover
    server = Server(tmp_path)
    yield server, tokens
    server.stop()


def request(url: str, *, token: str | None = None, body: bytes | None = None
            ) -> tuple[int, dict[str, str], bytes]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    sent = urllib.request.Request(url, data=body, headers=headers,
                                  method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(sent, timeout=60) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, \
                answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def archive_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tarred:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def encrypted_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr("bot.toml", 'name = "z"\ncommand = "python bot.py"\n')
        zipped.writestr("bot.py", b"x" * 40)
    data = bytearray(buffer.getvalue())
    # Set "encrypted" (bit 0 of the flags) in every local and central header.
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = data.find(signature)
        while start >= 0:
            data[start + at] |= 0x1
            start = data.find(signature, start + 4)
    return bytes(data)


def submit(server: Server, folder: Path, token: str, *more: str) -> Any:
    return taki("submit", server.url, str(folder), "--token", token, *more,
                cwd=server.where, check=False)


def test_files_are_private_and_leftovers_of_a_kill_are_swept(hosted: Any) -> None:
    server, _ = hosted
    where = server.where
    assert stat.S_IMODE((where / "competition.sqlite").stat().st_mode) == 0o600
    assert stat.S_IMODE((where / "competition-files" / "uploads").stat().st_mode) == 0o700
    assert list((where / "competition-files" / "replays").glob("*.tmp")) == []


def test_every_answer_carries_the_security_headers(hosted: Any) -> None:
    server, tokens = hosted
    for path in ("/api/competition", "/api/bots", "/finals/report/finals.html",
                 "/api/nothing", "/", "/static/nothing.css"):
        status, headers, _ = request(f"{server.url}{path}")
        assert status < 500, path
        assert all(h in headers for h in HEADERS), (path, headers)
    status, headers, _ = request(f"{server.url}/api/submissions", token=tokens["alice"])
    assert status == 200 and all(h in headers for h in HEADERS)


def test_names_are_matched_whole_and_compared_case_folded(hosted: Any, tmp_path: Path
                                                          ) -> None:
    server, tokens = hosted
    newline = bot_folder(tmp_path / "nl", "x")
    (newline / "bot.toml").write_text('name = "greedy\\n"\ncommand = "python random_bot.py"\n')
    done = submit(server, newline, tokens["alice"])
    assert done.returncode == 1 and "not a usable name" in done.stderr, done.stderr
    done = submit(server, bot_folder(tmp_path / "g", "greedy"), tokens["alice"], "--no-wait")
    assert done.returncode == 0, done.stderr
    done = submit(server, bot_folder(tmp_path / "G", "Greedy"), tokens["bob"], "--no-wait")
    assert done.returncode == 1 and "too close to the bot name 'greedy'" in done.stderr
    assert "HTTP 403" in done.stderr


def test_archives_the_disk_or_zipfile_cannot_take_are_refused_with_400(
        hosted: Any, tmp_path: Path) -> None:
    server, tokens = hosted
    manifest = b'name = "longname"\ncommand = "python bot.py"\n'
    long_name = archive_of({"bot.toml": manifest, "a" * 300: b"x"})
    for body, says in ((long_name, "longer than 255 bytes"), (encrypted_zip(), "encrypted")):
        status, headers, text = request(f"{server.url}/api/submissions",
                                        token=tokens["alice"], body=body)
        assert status == 400, text
        assert says.encode() in text
        assert all(h in headers for h in HEADERS)
    path = tmp_path / "long.tar.gz"
    path.write_bytes(long_name)
    done = submit(server, path, tokens["alice"])
    assert done.returncode == 1 and "longer than 255 bytes" in done.stderr
    assert "Traceback" not in "".join(server.lines)


def test_a_client_gone_mid_upload_is_one_line_of_the_log(hosted: Any) -> None:
    server, tokens = hosted
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    for _ in range(3):
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(f"POST /api/submissions HTTP/1.1\r\nHost: x\r\n"
                        f"Authorization: Bearer {tokens['alice']}\r\n"
                        f"Content-Length: 10000000\r\n\r\n".encode() + b"\0" * 100_000)
            time.sleep(0.5)
    time.sleep(2)
    status, _, _ = request(f"{server.url}/api/competition")
    assert status == 200
    server.stop()
    said = [line for line in server.lines if "disconnected" in line]
    assert 1 <= len(said) <= 3, server.lines  # (a later one may be refused unread: 429)
    assert not any("Traceback" in line for line in server.lines), server.lines
    assert list((server.where / "competition-files" / "incoming").iterdir()) == []


def test_an_anonymous_flood_gets_429_and_tokens_are_not_slowed(hosted: Any) -> None:
    server, tokens = hosted
    answers = [request(f"{server.url}/api/competition") for _ in range(40)]
    refused = [headers for status, headers, _ in answers if status == 429]
    assert refused  # beyond request_burst (30), less what requests_per_second refilled
    assert all(int(h["retry-after"]) >= 1 for h in refused)
    for _ in range(40):  # a participant's token is counted by the upload limits instead
        status, _, _ = request(f"{server.url}/api/submissions", token=tokens["bob"])
        assert status == 200


def test_uploads_over_the_pending_limit_are_refused_before_their_body_is_read(
        hosted: Any) -> None:
    server, tokens = hosted
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    head = (f"POST /api/submissions HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {tokens['alice']}\r\n"
            f"Content-Length: 5000000\r\n\r\n").encode()
    with socket.create_connection((host, int(port))) as first:
        first.sendall(head + b"\0" * 1000)  # being received: counts as pending
        time.sleep(1)
        for _ in range(5):
            with socket.create_connection((host, int(port))) as other:
                other.settimeout(30)
                other.sendall(head)  # no body at all
                received = b""
                while not received.endswith(b"}"):
                    received += other.recv(4096)
                answer = received.decode()
                assert answer.startswith("HTTP/1.1 429"), answer
                assert "being received or waiting for their check" in answer


def _sockets(pid: int) -> int:
    """The sockets a process has open."""
    fds = Path(f"/proc/{pid}/fd")
    return sum(1 for fd in fds.iterdir() if _link(fd).startswith("socket:"))


def _link(path: Path) -> str:
    try:
        return str(path.readlink())
    except FileNotFoundError:  # closed meanwhile
        return ""


def _answer(raw: socket.socket) -> str:
    """What the server answered on ``raw``, up to the end of its JSON."""
    raw.settimeout(60)
    received = b""
    while not received.endswith(b"}"):
        more = raw.recv(4096)
        assert more, received
        received += more
    return received.decode()


def _upload_head(token: str, length: int) -> bytes:
    return (f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}"
            f"\r\nContent-Length: {length}\r\n\r\n").encode()


def test_a_hostile_participants_parallel_uploads_leave_no_connection_open(
        hosted: Any) -> None:
    """40 uploads of 1 MiB at once by one participant over its limit: each is answered
    429 without its body being read, and the server keeps none of their connections
    (it closes each after its answer, whatever the client still sends)."""
    server, tokens = hosted
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    before = _sockets(server.process.pid)
    bomb = b"\0" * (1 << 20)
    with socket.create_connection((host, int(port))) as first:
        first.sendall(_upload_head(tokens["alice"], 5_000_000) + b"\0" * 1000)
        time.sleep(1)  # alice's one upload at a time is being received
        answers: list[int] = []

        def one() -> None:
            answers.append(request(f"{server.url}/api/submissions", token=tokens["alice"],
                                   body=bomb)[0])

        threads = [threading.Thread(target=one) for _ in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert answers == [429] * 40
        time.sleep(1)
        assert _sockets(server.process.pid) <= before + 1  # the first upload's, at most
    status, _, _ = request(f"{server.url}/api/competition")
    assert status == 200


def test_uploads_beyond_what_the_server_takes_at_once_get_503_from_their_headers(
        hosted: Any) -> None:
    """``concurrent_uploads = 2``: alice's and bob's uploads being received, carol's is
    answered 503 with a Retry-After before a byte of its body is sent; once one of the
    two is gone, carol's is let in."""
    server, tokens = hosted
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port))) as alice, \
            socket.create_connection((host, int(port))) as bob:
        alice.sendall(_upload_head(tokens["alice"], 5_000_000) + b"\0" * 1000)
        bob.sendall(_upload_head(tokens["bob"], 5_000_000) + b"\0" * 1000)
        time.sleep(1)
        with socket.create_connection((host, int(port))) as carol:
            carol.sendall(_upload_head(tokens["carol"], 5_000_000))  # no body at all
            answer = _answer(carol)
        assert answer.startswith("HTTP/1.1 503"), answer
        assert "retry-after: 5" in answer.lower()
        assert "uploads at once: try again in a few seconds" in answer
    time.sleep(1)  # alice's and bob's connections gone: their uploads with them
    status, _, text = request(f"{server.url}/api/submissions", token=tokens["carol"],
                              body=b"not an archive")
    assert status == 400, text
