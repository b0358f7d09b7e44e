"""Field validators shared by the message classes.

Every check raises :class:`LocalProtocolError` naming the offending field; decoding turns
that into a :class:`RemoteProtocolError`.
"""

from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from typing import Any

import attrs

from .constants import MAX_CONTAINER_LEN, MAX_INT32, MAX_NESTING
from .errors import LocalProtocolError

Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


def wire_type_name(value: object) -> str:
    """Name a value's type in wire terms, for error messages."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bytes | bytearray | memoryview):
        return "binary data"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a map"
    return f"a Python {type(value).__name__}"


def field_label(instance: object, attribute: "attrs.Attribute[Any]") -> str:
    return f"{getattr(instance, 'LABEL', type(instance).__name__)}.{attribute.name}"


def fail(where: str, problem: str) -> LocalProtocolError:
    return LocalProtocolError(f"{where} {problem}")


def require_int(where: str, value: object, low: int, high: int = MAX_INT32) -> None:
    if type(value) is not int:
        raise fail(where, f"must be an integer, got {wire_type_name(value)}")
    if not low <= value <= high:
        raise fail(where, f"must be between {low} and {high}, got {value}")


def _require_utf8(where: str, value: str) -> None:
    problem = _utf8_problem(value)
    if problem is not None:
        raise fail(where, problem[1])


def require_text(
    where: str,
    value: object,
    *,
    min_len: int = 0,
    max_len: int | None = None,
    choices: Collection[str] | None = None,
) -> None:
    if not isinstance(value, str):
        raise fail(where, f"must be a string, got {wire_type_name(value)}")
    _require_utf8(where, value)
    if choices is not None and value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise fail(where, f"must be one of {allowed}, got {value!r}")
    if len(value) < min_len:
        raise fail(where, "must not be empty" if min_len == 1 else f"is shorter than {min_len}")
    if max_len is not None and len(value) > max_len:
        raise fail(where, f"is longer than {max_len} characters")


_TRUSTED: ContextVar[bool] = ContextVar("taki_protocol_trusted", default=False)


class _TrustedData:
    """The context manager :func:`trusted_data` returns (a class: a caller may enter it
    for every message, and a generator-based one would cost several times more)."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token: Token[bool] = _TRUSTED.set(True)

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        _TRUSTED.reset(self._token)


def trusted_data() -> AbstractContextManager[None]:
    """Within this block, free-form data (views, legal actions, events, rule flags) is
    taken as it is, without the walk of :func:`require_plain`; every other check still
    runs. For data from a trusted source only, such as the views and legal actions the
    referee builds with its own rules engine."""
    return _TrustedData()


def require_plain(where: str, value: object, depth: int = 0) -> None:
    """Check that ``value`` is free-form protocol data.

    Allowed: nil, booleans, integers in the msgpack range, strings, arrays and maps with
    string keys, nested at most ``MAX_NESTING`` levels. Floats and binary data are not used
    by the protocol and are rejected.
    """
    problem = _plain_problem(value, depth)
    if problem is not None:
        path, message = problem
        raise fail(where + path, message)


def _plain_problem(value: object, depth: int) -> tuple[str, str] | None:
    """What is wrong with ``value`` as ``(path below it, problem)``, or None.

    This runs on every message, so the path is only spelled out on the way back from a
    problem, never while walking valid data, and the scalars that make up most of a
    message are checked in the loop rather than by a call each."""
    if not isinstance(value, list | dict):
        return _scalar_problem(value)
    if depth >= MAX_NESTING:
        return "", f"is nested deeper than {MAX_NESTING} levels"
    if len(value) > MAX_CONTAINER_LEN:
        return "", f"has more than {MAX_CONTAINER_LEN} elements"
    is_map = isinstance(value, dict)
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in pairs:
        if is_map and (type(key) is not str or not key.isascii()):
            if not isinstance(key, str):
                return "", f"has a key that is {wire_type_name(key)}, not a string"
            problem = _utf8_problem(key)
            if problem is not None:
                return " key", problem[1]
        kind = type(item)
        if kind is str and item.isascii():
            continue
        if kind is bool or item is None:
            continue
        if kind is int and _INT64_MIN <= item <= _UINT64_MAX:
            continue
        problem = _plain_problem(item, depth + 1)
        if problem is not None:
            where = f".{key}" if is_map else f"[{key}]"
            return where + problem[0], problem[1]
    return None


def _scalar_problem(value: object) -> tuple[str, str] | None:
    if isinstance(value, str):
        return _utf8_problem(value)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        if _INT64_MIN <= value <= _UINT64_MAX:
            return None
        return "", "is an integer outside the 64-bit range"
    return "", f"must be plain data, got {wire_type_name(value)}"


def _utf8_problem(value: str) -> tuple[str, str] | None:
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "", "is not valid Unicode (it holds a lone surrogate)"
    return None


# Every message runs these, so each one settles the common valid case first and
# spells out the field's label only on the way to an error.


def integer(low: int, high: int = MAX_INT32) -> Validator:
    def check(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
        if type(value) is not int or not low <= value <= high:
            require_int(field_label(instance, attribute), value, low, high)

    return check


def optional_integer(low: int, high: int = MAX_INT32) -> Validator:
    def check(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
        if value is not None and (type(value) is not int or not low <= value <= high):
            require_int(field_label(instance, attribute), value, low, high)

    return check


def boolean() -> Validator:
    def check(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
        if not isinstance(value, bool):
            label = field_label(instance, attribute)
            raise fail(label, f"must be a boolean, got {wire_type_name(value)}")

    return check


def _plainly_valid_text(
    value: object, min_len: int, max_len: int | None, choices: Collection[str] | None
) -> bool:
    return (
        type(value) is str
        and value.isascii()
        and len(value) >= min_len
        and (max_len is None or len(value) <= max_len)
        and (choices is None or value in choices)
    )


def text(
    *, min_len: int = 0, max_len: int | None = None, choices: Collection[str] | None = None
) -> Validator:
    def check(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
        if not _plainly_valid_text(value, min_len, max_len, choices):
            require_text(
                field_label(instance, attribute),
                value,
                min_len=min_len,
                max_len=max_len,
                choices=choices,
            )

    return check


def optional_text(*, max_len: int | None = None) -> Validator:
    def check(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
        if value is not None and not _plainly_valid_text(value, 0, max_len, None):
            require_text(field_label(instance, attribute), value, max_len=max_len)

    return check


def _walk_unless_trusted(
    instance: object, attribute: "attrs.Attribute[Any]", value: object
) -> None:
    """:func:`require_plain` on a field, except inside :func:`trusted_data`."""
    if not _TRUSTED.get():
        require_plain(field_label(instance, attribute), value)


def plain_map() -> Validator:
    def check(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
        if not isinstance(value, dict):
            label = field_label(instance, attribute)
            raise fail(label, f"must be a map, got {wire_type_name(value)}")
        _walk_unless_trusted(instance, attribute, value)

    return check


def list_of_maps(*, min_len: int = 0, required_key: str | None = None) -> Validator:
    """An array of maps; with ``required_key``, every map must hold that key as a string."""

    def check(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
        if not isinstance(value, list):
            label = field_label(instance, attribute)
            raise fail(label, f"must be an array, got {wire_type_name(value)}")
        if len(value) < min_len:
            raise fail(field_label(instance, attribute), f"must have at least {min_len} element(s)")
        for index, item in enumerate(value):
            if type(item) is dict and (
                required_key is None or _plainly_valid_text(item.get(required_key), 1, None, None)
            ):
                continue
            where = f"{field_label(instance, attribute)}[{index}]"
            if not isinstance(item, dict):
                raise fail(where, f"must be a map, got {wire_type_name(item)}")
            if required_key is not None:
                if required_key not in item:
                    raise fail(where, f"has no {required_key!r} key")
                require_text(f"{where}.{required_key}", item[required_key], min_len=1)
        _walk_unless_trusted(instance, attribute, value)

    return check


def list_of(element_type: type, *, min_len: int = 0, max_len: int = MAX_CONTAINER_LEN) -> Validator:
    """An array whose elements are all instances of ``element_type`` (already validated)."""

    def check(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
        if not isinstance(value, list):
            label = field_label(instance, attribute)
            raise fail(label, f"must be an array, got {wire_type_name(value)}")
        if not min_len <= len(value) <= max_len:
            label = field_label(instance, attribute)
            raise fail(label, f"must have between {min_len} and {max_len} elements")
        for index, item in enumerate(value):
            if not isinstance(item, element_type):
                got = wire_type_name(item)
                label = field_label(instance, attribute)
                raise fail(f"{label}[{index}]", f"must be {element_type.__name__}, got {got}")

    return check


def instance_of(expected: type) -> Validator:
    def check(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
        if not isinstance(value, expected):
            label = field_label(instance, attribute)
            raise fail(label, f"must be {expected.__name__}, got {wire_type_name(value)}")

    return check
