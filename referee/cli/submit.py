"""``taki-referee submit URL --token T PATH``: upload a bot to a competition server and
wait for its build and check (standard library only: a participant needs nothing else).

A folder is packed as a gzip-compressed tar of its contents (it must hold ``bot.toml``;
what its ``.submitignore`` names is left out; a symbolic link or a special file in the
rest is refused here, as the server would refuse it); an archive is sent as it is. The
upload is the request's body; the token goes in the ``Authorization`` header only.

A request that gets no answer (the server is down or restarting) or a 5xx is tried
again after :data:`RETRY_WAITS_S`, but for a 507 (the server's disk is full: it stays
full until the organizer frees space, so the upload is refused at once with that
reason, rather than after half a minute of retries). The upload carries an idempotency
key, new each time ``submit`` runs and the same in each retry: a server that stored the
upload but stopped before answering returns that submission to the retry, rather than
making a second one.
"""

from __future__ import annotations

import argparse
import fnmatch
import http.client
import io
import json
import os
import secrets
import sys
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Final

from referee.core import UsageError

__all__ = ["EXIT_REFUSED", "IGNORE_FILE", "TOKEN_VARIABLE", "left_out", "pack", "submit_command",
           "upload_body"]

#: Where ``submit`` finds the token when ``--token`` is not given.
TOKEN_VARIABLE: Final = "TAKI_REFEREE_TOKEN"
EXIT_REFUSED: Final = 1
#: Seconds between two looks at a submission being built and checked.
POLL_S: Final = 1.0
#: Seconds before each retry of a request that got no answer or a 5xx.
RETRY_WAITS_S: Final = (1.0, 2.0, 4.0, 8.0, 16.0)
#: The 5xx that is not tried again: the server's disk is full (no retry in the next
#: half minute would find room; the organizer frees it).
DISK_FULL: Final = 507
#: The header of the upload's idempotency key (referee.server.app reads it).
KEY_HEADER: Final = "Idempotency-Key"
#: A folder's list of what ``submit`` leaves out of the upload (what a build makes).
IGNORE_FILE: Final = ".submitignore"
_ARCHIVES: Final = (".tar.gz", ".tgz", ".tar", ".zip", ".tar.xz", ".tar.bz2")


class ServerUnreachable(UsageError):
    """The server cannot be reached, or did not answer as a competition server."""


class NoAnswer(ServerUnreachable):
    """The request got no answer: no connection, or the connection broke."""


class ServerRefused(Exception):
    """The server refused the request: its status and one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{message} (HTTP {status})")
        self.status = status


def left_out(folder: Path) -> list[str]:
    """The patterns of the folder's ``.submitignore``: one path or glob a line, relative
    to the folder (``#`` starts a comment). What one names, and everything in a folder
    one names, is not uploaded."""
    path = folder / IGNORE_FILE
    if not path.is_file():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text("utf-8").splitlines())
    return [line.strip("/") for line in lines if line.strip("/")]


def pack(folder: Path) -> bytes:
    """The folder's contents, but what its ``.submitignore`` names, as a gzip-compressed
    tar with the files' times (a build compares them); UsageError for a folder the server
    would refuse (no bot.toml, a link or a special file inside)."""
    if not (folder / "bot.toml").is_file():
        raise UsageError(f"{folder}: no bot.toml (name, command, optional build;"
                         " docs/competition.md)")
    patterns = left_out(folder)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for root, dirs, files in os.walk(folder):
            relative = Path(root).relative_to(folder)
            dirs[:] = sorted(d for d in dirs
                             if not _ignored((relative / d).as_posix(), patterns))
            for name in dirs + sorted(files):
                path = Path(root) / name
                arcname = (relative / name).as_posix()
                if _ignored(arcname, patterns):
                    continue
                if path.is_symlink() or not (path.is_file() or path.is_dir()):
                    raise UsageError(f"{path}: links and special files cannot be uploaded"
                                     f" (copy the file it points to instead, or name it in"
                                     f" {IGNORE_FILE})")
                archive.add(path, arcname=arcname, recursive=False)
    return buffer.getvalue()


def _ignored(relative: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns)


def _request(url: str, token: str, *, body: bytes | None = None,
             key: str | None = None) -> dict[str, Any]:
    """One request; ServerRefused for an HTTP error, NoAnswer when no answer came."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/octet-stream"
    if key is not None:
        headers[KEY_HEADER] = key
    request = urllib.request.Request(url, data=body, headers=headers,
                                     method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            payload = answer.read()
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error") or exc.reason
        except (ValueError, AttributeError):
            message = exc.reason
        raise ServerRefused(exc.code, str(message)) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
        raise NoAnswer(f"cannot reach {url}: {reason}") from None
    try:
        data = json.loads(payload)
    except ValueError:
        raise ServerUnreachable(f"{url} did not answer with JSON: is it a competition"
                                " server (taki-referee serve)?") from None
    if not isinstance(data, dict):
        raise ServerUnreachable(f"{url} did not answer as a competition server")
    return data


def _retried(url: str, token: str, *, body: bytes | None = None,
             key: str | None = None) -> dict[str, Any]:
    """:func:`_request`, tried again after each of RETRY_WAITS_S while it gets no answer
    or a 5xx but :data:`DISK_FULL` (an upload with the same ``key`` each time)."""
    for wait in (*RETRY_WAITS_S, None):
        try:
            return _request(url, token, body=body, key=key)
        except ServerRefused as exc:
            if exc.status < 500 or exc.status == DISK_FULL or wait is None:
                raise
            problem = str(exc)
        except NoAnswer as exc:
            if wait is None:
                raise
            problem = str(exc)
        print(f"taki-referee: {problem}; trying again in {wait:g} s", file=sys.stderr,
              flush=True)
        time.sleep(wait)
    raise AssertionError("unreachable")


def _show(sub: dict[str, Any]) -> int:
    """Print a submission's final state; the exit status that goes with it."""
    status = sub.get("status")
    if status in ("active", "retired"):
        print(f"submission {sub['id']}: passed; {sub['entrant']} plays in the ladder")
        return 0
    print(f"submission {sub['id']}: rejected at the step {sub.get('step')}:")
    print(sub.get("output") or "(no output)")
    return EXIT_REFUSED


def upload_body(path: Path) -> bytes:
    """What ``submit`` uploads for ``path``: a folder packed, an archive as it is."""
    if path.is_dir():
        return pack(path)
    if path.is_file() and path.name.endswith(_ARCHIVES):
        return path.read_bytes()
    raise UsageError(f"{path}: not a folder nor a .tar.gz, .tar or .zip archive")


def submit_command(args: argparse.Namespace) -> int:
    if args.path is None:
        raise UsageError("submit needs the server's URL and the bot's PATH"
                         " (or --dry-run PATH to try it on this machine)")
    token = args.token or os.environ.get(TOKEN_VARIABLE, "")
    if not token:
        raise UsageError(f"submit needs your token: --token TOKEN or ${TOKEN_VARIABLE}")
    body = upload_body(args.path)
    base = args.url.rstrip("/")
    try:
        key = secrets.token_urlsafe(24)  # one upload, whatever its retries
        sub = _retried(f"{base}/api/submissions", token, body=body, key=key)["submission"]
        print(f"submission {sub['id']}: {sub['bot']} uploaded ({len(body)} bytes), {sub['status']}",
              flush=True)
        if args.no_wait:
            return 0
        deadline = time.monotonic() + args.timeout
        shown = sub["status"]
        while sub["status"] in ("queued", "building", "checking"):
            if time.monotonic() > deadline:
                print(f"submission {sub['id']}: still {sub['status']} after {args.timeout:g} s;"
                      " it goes on on the server", file=sys.stderr)
                return EXIT_REFUSED
            time.sleep(POLL_S)
            sub = _retried(f"{base}/api/submissions/{sub['id']}", token)["submission"]
            if sub["status"] != shown:
                shown = sub["status"]
                print(f"submission {sub['id']}: {shown}", flush=True)
        return _show(sub)
    except ServerRefused as exc:
        print(f"taki-referee: refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED
