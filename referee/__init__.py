"""A referee for Super Taki bots: pure rules, a sans-I/O protocol and a trio shell.

Each package names its public face in its ``__init__``'s ``__all__``, and other packages
import from the face (``from referee.match import play_unit``). Above the rules, a face
imports a name's module on first use (:func:`lazy_face`): importing a package costs
nothing, so a worker process or the command's ``--help`` loads only what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__version__ = "0.1.0"

__all__ = ["__version__", "lazy_face"]


def lazy_face(package: str, homes: Mapping[str, tuple[str, ...]]) -> Callable[[str], object]:
    """A package face's module ``__getattr__``: each name of ``homes`` (a module of
    ``package`` -> the names it gives the face) comes from its module, imported when the
    name is first asked for. The name is looked up in its module each time, never kept:
    the face always says what the module says."""
    home_of = {name: f"{package}.{module}" for module, names in homes.items() for name in names}

    def face_attribute(name: str) -> object:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return face_attribute
