"""A referee for Super Taki bots: pure rules, a sans-I/O protocol and a trio shell.

Each package names its public face in its ``__init__``, and other packages import from
the face (``from referee.match import play_unit``). A face whose modules cost little to
import imports them all and lists its names in ``__all__`` (as :mod:`referee.rules`).
A face whose modules are costly imports a name's module on first use
(:func:`lazy_face`): its names are written once, as the imports of its
``if TYPE_CHECKING:`` block, which the type checker reads and from which the face's table
is made at run time; so a worker process or the command's ``--help`` loads only what it
uses.
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__version__ = "0.1.0"

__all__ = ["__version__", "face_table", "lazy_face"]

#: One import of a lazy face's ``if TYPE_CHECKING:`` block: ``from .module import A, B``
#: (the names in parentheses when they take several lines).
_FACE_IMPORT = re.compile(r"^[ \t]+from \.(\w+) import (?:\(([^)]*)\)|([^\n]*))$", re.M)


def face_table(source: str) -> dict[str, str]:
    """Each name a lazy face's source gives, with the module of its package it comes
    from, read from the ``from .module import ...`` lines of its ``if TYPE_CHECKING:``
    block (the face's only indented imports)."""
    table: dict[str, str] = {}
    for found in _FACE_IMPORT.finditer(source):
        names = found.group(2) if found.group(2) is not None else found.group(3)
        for name in names.replace(",", " ").split():
            table[name] = found.group(1)
    return table


def lazy_face(package: str, init_file: str) -> tuple[
        Callable[[str], object], Callable[[], list[str]], list[str]]:
    """A lazy package face: its module ``__getattr__``, ``__dir__`` and ``__all__``, for
    the names its ``__init__`` (``init_file``) imports under ``if TYPE_CHECKING:``. A
    name's module is imported when the name is first asked for, and the name is looked
    up in its module each time, never kept: the face always says what the module says.

    ``__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)``
    """
    with open(init_file, encoding="utf-8") as source:
        home_of = {name: f"{package}.{module}"
                   for name, module in face_table(source.read()).items()}
    names = sorted(home_of)

    def face_attribute(name: str) -> object:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def face_dir() -> list[str]:
        return [*names, "__all__"]

    return face_attribute, face_dir, names
