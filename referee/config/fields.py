"""Reading a TOML table into the fields of an attrs class.

Every section of a league file and of a competition file is read the same way: the keys
a table may hold are the fields of the value it builds, each value's kind (an integer,
true or false, a string, one of a few names, a path, a list of one of those) comes from
the field's type, its bounds from the field's validator, and a key left out keeps the
field's default. A field whose type is itself an attrs class is read from a table of
its own (a section of the file), or, when the caller says so, from keys of the same
table (the match settings among a league's ``[league]`` keys). Nothing about a key is
written twice: a field added to the value is a key of the file, with its checks.

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
    "build",
    "check_kind",
    "keys_of",
    "read_fields",
    "read_value",
    "unknown_key",
]

T = TypeVar("T")


class Fail(Protocol):
    """The caller's way to report a problem with ``key`` (None: the whole table)."""

    def __call__(self, key: str | None, message: str) -> Exception: ...


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


def _item_kind(kind: Any) -> Any | None:
    """``X`` of ``tuple[X, ...]``, else None."""
    if typing.get_origin(kind) is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return args[0]
    return None


def check_kind(kind: Any, value: object) -> str | None:
    """What is wrong with a TOML ``value`` for a field of type ``kind``, or None."""
    kind, _optional = _non_optional(kind)
    choices = _choices(kind)
    if choices is not None:
        if value in choices:
            return None
        allowed = " or ".join(f'"{c}"' for c in choices)
        return f"must be {allowed}, not {value!r}"
    item = _item_kind(kind)
    if item is not None:
        if not isinstance(value, list):
            return f"must be a list, not {value!r}"
        for number, each in enumerate(value, 1):
            problem = check_kind(item, each)
            if problem is not None:
                return f"item {number} {problem}"
        return None
    if kind is bool:
        return None if isinstance(value, bool) else "must be true or false"
    if kind is int:
        return None if _is_int(value) else f"must be an integer, not {value!r}"
    if kind is Path:
        return None if isinstance(value, str) else "must be a path string"
    if kind is str:
        return None if isinstance(value, str) else f"must be a string, not {value!r}"
    raise TypeError(f"no TOML reading for fields of type {kind!r}")


def _convert(kind: Any, value: Any, base: Path | None) -> Any:
    """A checked TOML ``value`` as the field's type: a path relative to ``base``, an
    enum member, a tuple."""
    kind = _non_optional(kind)[0]
    item = _item_kind(kind)
    if item is not None:
        return tuple(_convert(item, each, base) for each in value)
    if kind is Path and isinstance(value, str):
        return (base or Path()) / value
    if isinstance(kind, type) and issubclass(kind, enum.StrEnum):
        return kind(value)
    return value


def _nested(kind: Any) -> type | None:
    """The attrs class of a field whose value is a table of its own, else None."""
    kind = _non_optional(kind)[0]
    return kind if isinstance(kind, type) and attrs.has(kind) else None


# --------------------------------------------------------------------------- tables


def keys_of(cls: type, skip: Collection[str] = ()) -> dict[str, attrs.Attribute[Any]]:
    """The fields of the attrs class ``cls`` a table may set, by name (types resolved)."""
    attrs.resolve_types(cls)
    return {f.name: f for f in attrs.fields(cls) if f.name not in skip and f.init}


def unknown_key(known: Collection[str]) -> str:
    """The message for a key that is none of ``known``."""
    return f"is not a known key (known: {', '.join(sorted(known))})"


@attrs.frozen
class _Reading:
    """How one table is read: where problems go, how paths and sub-tables are read."""

    fail: Fail
    base: Path | None
    within: Callable[[str], Fail] | None

    def value(self, field: attrs.Attribute[Any], key: str, value: object) -> Any:
        """The value of ``key``, checked against ``field`` and converted."""
        nested = _nested(field.type)
        if nested is not None:
            if self.within is None:
                raise TypeError(f"no reading for the table {key!r}: no place for its problems")
            if not isinstance(value, dict):
                raise self.fail(key, "must be a table")
            return read_value(value, nested, self.within(key), base=self.base)
        problem = check_kind(field.type, value)
        if problem is not None:
            raise self.fail(key, problem)
        value = _convert(field.type, value, self.base)
        if field.validator is not None:
            try:
                field.validator(None, field, value)
            except (TypeError, ValueError) as exc:
                raise self.fail(key, _without_name(_message(exc), key)) from None
        return value


def _owners(
    cls: type, skip: Collection[str], inline: Mapping[str, Collection[str]]
) -> dict[str, tuple[attrs.Attribute[Any], str | None]]:
    """Each key of the table: its field, and the inline field it belongs to (None: a
    field of ``cls`` itself)."""
    owners: dict[str, tuple[attrs.Attribute[Any], str | None]] = {
        name: (field, None) for name, field in keys_of(cls, (*skip, *inline)).items()}
    every = keys_of(cls)
    for part, left_out in inline.items():
        kind = _nested(every[part].type)
        if kind is None:
            raise TypeError(f"{cls.__name__}.{part} is not an attrs class: it cannot be inline")
        for name, field in keys_of(kind, left_out).items():
            if name in owners:
                raise TypeError(f"{name!r} is a key of {cls.__name__} twice")
            owners[name] = (field, part)
    return owners


def read_fields(
    table: Mapping[str, Any],
    cls: type,
    fail: Fail,
    *,
    skip: Collection[str] = (),
    extra: Collection[str] = (),
    base: Path | None = None,
    inline: Mapping[str, Collection[str]] | None = None,
    within: Callable[[str], Fail] | None = None,
) -> dict[str, Any]:
    """The keyword arguments that ``table`` sets for ``cls``: each key a field of
    ``cls`` (``skip`` left out: the caller reads those), of the field's kind and within
    its validator's bounds. Keys in ``extra`` are allowed and left to the caller. Path
    fields are taken relative to ``base``.

    A field whose type is an attrs class is read from a sub-table (a section) with
    :func:`read_value`, its problems reported through ``within(key)``. A field named in
    ``inline`` (an attrs class too) is read from keys of this same table: its fields
    less the ones ``inline`` maps it to; its entry in the result is the keyword
    arguments read for it, for the caller to complete and build."""
    inline = inline or {}
    owners = _owners(cls, skip, inline)
    known = set(owners) | set(extra)
    reading = _Reading(fail, base, within)
    kwargs: dict[str, Any] = {part: {} for part in inline}
    for key, value in table.items():
        if key not in known:
            raise fail(key, unknown_key(known))
        if key not in owners:
            continue
        field, part = owners[key]
        (kwargs if part is None else kwargs[part])[key] = reading.value(field, key, value)
    return kwargs


def read_value(
    table: Mapping[str, Any],
    cls: type[T],
    fail: Fail,
    *,
    base: Path | None = None,
    within: Callable[[str], Fail] | None = None,
) -> T:
    """The ``cls`` that ``table`` describes: :func:`read_fields`, then :func:`build`."""
    return build(cls, read_fields(table, cls, fail, base=base, within=within), fail)


def build(cls: Callable[..., T], kwargs: Mapping[str, Any], fail: Fail) -> T:
    """``cls(**kwargs)``; a problem the value itself finds (a check across fields) is
    reported against the key its message names, else against the whole table."""
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        message = next(iter(str(exc).splitlines()), type(exc).__name__)
        culprit = next((k for k in kwargs if k in message), None)
        raise fail(culprit, message) from None


def _message(exc: Exception) -> str:
    """An exception's message: its first argument when that is a string (attrs'
    validators add the attribute and the bounds after it), else what it says."""
    first = exc.args[0] if exc.args else None
    return first if isinstance(first, str) else str(exc)


def _without_name(message: str, key: str) -> str:
    """A validator's message without the field's name in front (the place says it)."""
    for prefix in (f"'{key}' ", f"{key} "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message
