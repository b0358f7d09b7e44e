"""The bounds of integer settings, as attrs validators whose messages read well after a
field's name: ``strikes must be at least 1, not 0`` (a settings file's message, which
names the key at its line, leaves the name out). The values of ``core`` and the
settings files of ``referee.config`` check their fields with them (one wording)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

__all__ = ["at_least", "between"]


def at_least(low: int) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    """A validator: an integer of at least ``low`` (None passes: an optional field)."""

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and value < low:
            raise ValueError(f"{attribute.name} must be at least {low}, not {value!r}")

    return check


def between(low: int, high: int) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    """A validator: an integer from ``low`` to ``high``."""

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and not low <= value <= high:
            raise ValueError(
                f"{attribute.name} must be between {low} and {high}, not {value!r}")

    return check
