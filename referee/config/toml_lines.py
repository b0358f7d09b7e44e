"""Finding the line of a key in a TOML file, so that an error names ``league.toml:LINE``
(tomllib gives values, not their places)."""

from __future__ import annotations

import re


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
