"""Reading a TOML table into the fields of an attrs class.

Every section of a league file (and of any other settings file) is read the same way: the
keys a table may hold are the fields of the value it builds, each value's kind (an
integer, true or false, a string, one of a few names, a path) comes from the field's
type, its bounds from the field's validator, and a key left out keeps the field's
default. Nothing about a key is written twice: a field added to the value is a key of
the file, with its checks.

A problem is reported through the caller's ``fail(key, message)``, which knows the file,
the line and the section, and returns the :class:`~referee.config.errors.SettingsError`
to raise.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

import attrs

__all__ = [
    "Fail",
    "at_least",
    "between",
    "build",
    "check_kind",
    "keys_of",
    "read_fields",
    "unknown_key",
]

T = TypeVar("T")


class Fail(Protocol):
    """The caller's way to report a problem with ``key`` (None: the whole table)."""

    def __call__(self, key: str | None, message: str) -> Exception: ...


# --------------------------------------------------------------------------- validators


def at_least(low: int) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    """A validator: an integer of at least ``low`` (None passes: an optional field)."""

    def check(_instance: Any, _attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and value < low:
            raise ValueError(f"must be at least {low}, not {value!r}")

    return check


def between(low: int, high: int) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    """A validator: an integer from ``low`` to ``high``."""

    def check(_instance: Any, _attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}, not {value!r}")

    return check


# --------------------------------------------------------------------------- kinds


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _choices(kind: Any) -> tuple[Any, ...] | None:
    """The values a ``Literal`` or a string enum allows, else None."""
    if typing.get_origin(kind) is typing.Literal:
        return typing.get_args(kind)
    if isinstance(kind, type) and issubclass(kind, enum.StrEnum):
        return tuple(member.value for member in kind)
    return None


def _non_optional(kind: Any) -> tuple[Any, bool]:
    """``X | None`` -> (X, True); anything else -> (it, False)."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(kind)) == 2:
            return args[0], True
    return kind, False


def check_kind(kind: Any, value: object) -> str | None:
    """What is wrong with a TOML ``value`` for a field of type ``kind``, or None."""
    kind, _optional = _non_optional(kind)
    choices = _choices(kind)
    if choices is not None:
        if value in choices:
            return None
        allowed = " or ".join(f'"{c}"' for c in choices)
        return f"must be {allowed}, not {value!r}"
    if kind is bool:
        return None if isinstance(value, bool) else "must be true or false"
    if kind is int:
        return None if _is_int(value) else f"must be an integer, not {value!r}"
    if kind is Path:
        return None if isinstance(value, str) else "must be a path string"
    if kind is str:
        return None if isinstance(value, str) else f"must be a string, not {value!r}"
    raise TypeError(f"no TOML reading for fields of type {kind!r}")


# --------------------------------------------------------------------------- tables


def keys_of(cls: type, skip: Collection[str] = ()) -> dict[str, attrs.Attribute[Any]]:
    """The fields of the attrs class ``cls`` a table may set, by name (types resolved)."""
    attrs.resolve_types(cls)
    return {f.name: f for f in attrs.fields(cls) if f.name not in skip and f.init}


def unknown_key(known: Collection[str]) -> str:
    """The message for a key that is none of ``known``."""
    return f"is not a known key (known: {', '.join(sorted(known))})"


def read_fields(
    table: Mapping[str, Any],
    cls: type,
    fail: Fail,
    *,
    skip: Collection[str] = (),
    extra: Collection[str] = (),
    base: Path | None = None,
) -> dict[str, Any]:
    """The keyword arguments that ``table`` sets for ``cls``: each key a field of
    ``cls`` (``skip`` left out: the caller reads those), of the field's kind and within
    its validator's bounds. Keys in ``extra`` are allowed and left to the caller. Path
    fields are taken relative to ``base``."""
    fields = keys_of(cls, skip)
    known = set(fields) | set(extra)
    kwargs: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise fail(key, unknown_key(known))
        field = fields.get(key)
        if field is None:
            continue
        problem = check_kind(field.type, value)
        if problem is not None:
            raise fail(key, problem)
        kind = _non_optional(field.type)[0]
        if isinstance(value, str) and kind is Path:
            value = (base or Path()) / value
        elif isinstance(kind, type) and issubclass(kind, enum.StrEnum):
            value = kind(value)
        if field.validator is not None:
            try:
                field.validator(None, field, value)
            except (TypeError, ValueError) as exc:
                raise fail(key, _without_name(str(exc), key)) from None
        kwargs[key] = value
    return kwargs


def build(cls: Callable[..., T], kwargs: Mapping[str, Any], fail: Fail) -> T:
    """``cls(**kwargs)``; a problem the value itself finds (a check across fields) is
    reported against the key its message names, else against the whole table."""
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        culprit = next((k for k in kwargs if k in message), None)
        raise fail(culprit, message) from None


def _without_name(message: str, key: str) -> str:
    """A validator's message without the field's name in front (the place says it)."""
    for prefix in (f"'{key}' ", f"{key} "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message
