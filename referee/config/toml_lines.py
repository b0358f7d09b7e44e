"""Finding the line of a key in a TOML file, so that an error names ``league.toml:LINE``
(tomllib gives values, not their places)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from referee.config.errors import SettingsError


class KeyLocator:
    """Finds the line of a key in a TOML file, for error messages."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def line_of(self, section: str, key: str | None = None, index: int = 0) -> int | None:
        """The line of ``key`` in the ``index``-th ``[section]`` (or ``[[section]]``) table;
        the table's header line when the key is not written there (a missing key); the
        line of ``section = ...`` when the section is a top-level key."""
        current = ""
        seen = -1
        header_line = None
        for number, raw in enumerate(self.lines, 1):
            line = raw.strip()
            header = re.match(r"^\[\[?\s*([A-Za-z0-9_.\"-]+)\s*\]\]?", line)
            if header:
                current = header.group(1)
                if current == section:
                    seen += 1
                    if seen == index:
                        header_line = number
                        if key is None:
                            return number
                elif (
                    key is not None and seen == index and current == f"{section}.{key}"
                ):  # a sub-table such as [bots.limits]
                    return number
                continue
            if current == "" and _assigns(line, section):
                return number
            if current == section and seen == index and key is not None and _assigns(line, key):
                return number
        return header_line


def _assigns(line: str, key: str) -> bool:
    """Whether a TOML line assigns ``key`` (plain, quoted or dotted)."""
    return re.match(rf"^([\"']?){re.escape(key)}\1\s*(=|\.)", line) is not None


def read_toml_file(path: Path, what: str) -> tuple[str, dict[str, Any]]:
    """The text of the TOML file ``path`` (a ``what``, e.g. "league file", for messages)
    and its tables; SettingsError when it cannot be read, is not UTF-8, or is not TOML
    (naming the line and showing it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"cannot read {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise SettingsError(f"{path}: not a UTF-8 text file") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(path, text, exc) from None


def _syntax_error(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> SettingsError:
    """A TOML syntax error with its line number and the text of that line."""
    message = str(exc)
    lines = text.splitlines()
    match = re.search(r"\(at line (\d+), column \d+\)", message)
    if match:
        number = int(match.group(1))
    elif "end of document" in message:
        number = len(lines)
    else:
        return SettingsError(f"{path}: TOML syntax error: {message}")
    message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
    shown = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return SettingsError(f"{path}:{number}: TOML syntax error: {message}: {shown!r}")
