"""The table-driven reader (``referee.config.fields``): lists of a kind, sections read
as nested values, and an inline value whose keys share its parent's table."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import attrs
import pytest

from referee.config.fields import Fail, read_fields, read_value
from referee.core.bounds import at_least


class Shade(enum.StrEnum):
    LIGHT = "light"
    DARK = "dark"


class Problem(Exception):
    pass


def fail_in(section: str) -> Fail:
    def fail(key: str | None, message: str) -> Exception:
        return Problem(f"[{section}] {key}: {message}")
    return fail


@attrs.frozen
class Inner:
    sizes: tuple[int, ...] = attrs.field(default=(2,), validator=attrs.validators.min_len(1))
    shades: tuple[Shade, ...] = ()
    files: tuple[Path, ...] = ()
    count: int = attrs.field(default=1, validator=at_least(1))


@attrs.frozen
class Outer:
    name: str = "x"
    inner: Inner = attrs.field(factory=Inner)


@attrs.frozen
class Holder:
    label: str
    inner: Inner = attrs.field(factory=Inner)
    size: int = 2


def read(table: dict[str, Any], cls: type = Inner, **options: Any) -> Any:
    return read_value(table, cls, fail_in("t"), **options)


def test_a_list_of_a_kind_reads_as_a_tuple_of_its_values() -> None:
    value = read({"sizes": [2, 4], "shades": ["dark", "light"], "files": ["a", "b/c"]},
                 base=Path("/league"))
    assert value == Inner(sizes=(2, 4), shades=(Shade.DARK, Shade.LIGHT),
                          files=(Path("/league/a"), Path("/league/b/c")))
    assert type(value.sizes) is tuple and type(value.shades[0]) is Shade


@pytest.mark.parametrize(("table", "message"), [
    ({"sizes": 2}, "[t] sizes: must be a list, not 2"),
    ({"sizes": [2, "4"]}, "[t] sizes: item 2 must be an integer, not '4'"),
    ({"sizes": [2, True]}, "[t] sizes: item 2 must be an integer, not True"),
    ({"shades": ["dim"]}, "[t] shades: item 1 must be \"light\" or \"dark\", not 'dim'"),
    ({"files": [3]}, "[t] files: item 1 must be a path string"),
    ({"sizes": []}, "[t] sizes: Length of 'sizes' must be >= 1: 0"),
])
def test_a_bad_list_names_its_key_and_item(table: dict[str, Any], message: str) -> None:
    with pytest.raises(Problem) as caught:
        read(table)
    assert str(caught.value) == message


def test_a_nested_value_is_read_from_its_own_table() -> None:
    value = read({"name": "y", "inner": {"sizes": [3], "count": 2}}, Outer, within=fail_in)
    assert value == Outer(name="y", inner=Inner(sizes=(3,), count=2))
    assert read({}, Outer, within=fail_in) == Outer()


def test_a_nested_value_reports_its_problems_in_its_own_table() -> None:
    with pytest.raises(Problem, match=r"^\[inner\] count: must be at least 1, not 0$"):
        read({"inner": {"count": 0}}, Outer, within=fail_in)
    with pytest.raises(Problem, match=r"^\[inner\] colour: is not a known key"):
        read({"inner": {"colour": 0}}, Outer, within=fail_in)
    with pytest.raises(Problem, match=r"^\[t\] inner: must be a table$"):
        read({"inner": 3}, Outer, within=fail_in)
    with pytest.raises(TypeError, match="no place for its problems"):
        read({"inner": {}}, Outer)


def test_an_inline_value_takes_its_keys_from_the_same_table() -> None:
    kwargs = read_fields({"label": "l", "count": 3, "sizes": [2, 3], "size": 4}, Holder,
                         fail_in("t"), inline={"inner": ("files",)})
    assert kwargs == {"label": "l", "size": 4, "inner": {"count": 3, "sizes": (2, 3)}}
    assert read_fields({}, Holder, fail_in("t"), inline={"inner": ()}) == {"inner": {}}


def test_an_inline_value_is_checked_and_its_left_out_keys_are_unknown() -> None:
    with pytest.raises(Problem, match=r"^\[t\] count: must be at least 1, not 0$"):
        read_fields({"count": 0}, Holder, fail_in("t"), inline={"inner": ()})
    with pytest.raises(Problem) as caught:
        read_fields({"files": []}, Holder, fail_in("t"), inline={"inner": ("files",)})
    assert str(caught.value) == (
        "[t] files: is not a known key (known: count, label, shades, size, sizes)")
    with pytest.raises(Problem, match="is not a known key"):
        read_fields({"inner": {}}, Holder, fail_in("t"), inline={"inner": ()})


def test_an_inline_key_that_clashes_is_a_programming_error() -> None:
    @attrs.frozen
    class Clash:
        count: int = 0
        inner: Inner = attrs.field(factory=Inner)

    with pytest.raises(TypeError, match="'count' is a key of Clash twice"):
        read_fields({}, Clash, fail_in("t"), inline={"inner": ()})
    with pytest.raises(TypeError, match="cannot be inline"):
        read_fields({}, Holder, fail_in("t"), inline={"size": ()})
