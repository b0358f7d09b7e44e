"""A submission's manifest, ``bot.toml`` at the top of the upload: the bot's ``name``,
the ``command`` that starts it (run in its folder) and an optional ``build`` (a shell
command run once, in the sandbox, before the check)."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path
from typing import Final

import attrs

from referee.competition.errors import Refusal, Refused
from referee.competition.names import name_error

__all__ = ["MANIFEST", "Manifest", "find_root", "read_manifest"]

MANIFEST: Final = "bot.toml"
_MAX_BYTES: Final = 64 * 1024
_KEYS: Final = ("name", "command", "build")


@attrs.frozen
class Manifest:
    name: str
    command: str
    build: str | None = None


def _bad(message: str) -> Refused:
    return Refused(Refusal.BAD_UPLOAD, f"{MANIFEST}: {message}")


def find_root(folder: Path) -> Path:
    """The folder of the upload that holds ``bot.toml``: its top, or its only folder
    (an archive of a folder rather than of its contents)."""
    if (folder / MANIFEST).is_file():
        return folder
    entries = list(folder.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() and (
            entries[0] / MANIFEST).is_file():
        return entries[0]
    raise _bad(f"missing: the upload needs a {MANIFEST} at its top"
               " with name and command (docs/competition.md)")


def read_manifest(root: Path) -> Manifest:
    """The manifest in ``root``; Refused (BAD_UPLOAD) saying what is wrong with it."""
    path = root / MANIFEST
    if path.is_symlink() or not path.is_file():
        raise _bad("missing or not a file")
    if path.stat().st_size > _MAX_BYTES:
        raise _bad(f"larger than {_MAX_BYTES // 1024} KiB")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise _bad("not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as exc:
        raise _bad(f"TOML syntax error: {exc}") from None
    for key in data:
        if key not in _KEYS:
            raise _bad(f"unknown key {key!r} (known: {', '.join(_KEYS)})")
    values: dict[str, str] = {}
    for key in _KEYS:
        value = data.get(key)
        if value is None:
            if key != "build":
                raise _bad(f"{key} is missing")
            continue
        if not isinstance(value, str) or not value.strip() or "\0" in value:
            raise _bad(f"{key} must be a non-empty string")
        values[key] = value
    problem = name_error(values["name"])
    if problem is not None:
        raise _bad(f"name: {problem}")
    try:
        if not shlex.split(values["command"]):
            raise ValueError("empty")
    except ValueError as exc:
        raise _bad(f"command: cannot be split into words ({exc})") from None
    return Manifest(values["name"], values["command"], values.get("build"))
