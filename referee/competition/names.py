"""The names of participants and bots: what makes one usable, and when two are the same.

A name is matched whole (``fullmatch``: ``"greedy\\n"`` is no name), and two names are
compared as their NFKC form, case-folded: ``Greedy`` is the bot ``greedy`` to a reader,
so it is not another bot's name. Pure.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from referee.config import NAME_PATTERN

__all__ = ["lookalike", "name_error", "same_name"]


def name_error(name: str) -> str | None:
    """What keeps ``name`` from naming a participant or a bot, or None."""
    if NAME_PATTERN.fullmatch(name) is None:
        return (f"{name!r} is not a usable name: 1 to 64 letters, digits and . _ + -"
                " (no spaces, no @)")
    return None


def same_name(name: str) -> str:
    """What two names are compared as: NFKC, case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def lookalike(name: str, taken: Iterable[str]) -> str | None:
    """The name of ``taken`` that reads as ``name`` and is not it, or None."""
    wanted = same_name(name)
    for other in taken:
        if other != name and same_name(other) == wanted:
            return other
    return None
