"""Exception groups, read in one place.

Trio's nurseries wrap whatever their tasks raise in a :class:`BaseExceptionGroup`, even a
single exception. The referee mostly wants the one exception a group stands for (an
interrupt first), the leaves of some kinds, or the first leaf for a message: these
functions answer each of those questions for every caller.
"""

from __future__ import annotations

__all__ = ["first_leaf", "leaves", "only", "sole_cause"]


def leaves(
    exc: BaseException, kinds: tuple[type[BaseException], ...] = (BaseException,)
) -> list[BaseException]:
    """The exceptions of the given kinds in ``exc``, groups opened at every depth (a
    plain exception is its own leaf)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner, kinds)]
    return [exc] if isinstance(exc, kinds) else []


def sole_cause(exc: BaseException) -> BaseException:
    """The one exception ``exc`` stands for: a KeyboardInterrupt in it if it holds one,
    else its only leaf; ``exc`` itself when it holds several (or is not a group)."""
    found = leaves(exc)
    for leaf in found:
        if isinstance(leaf, KeyboardInterrupt):
            return leaf
    return found[0] if len(found) == 1 else exc


def only(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc`` is nothing but exceptions of ``kind`` (a group of them included)."""
    found = leaves(exc)
    return bool(found) and all(isinstance(leaf, kind) for leaf in found)


def first_leaf(exc: BaseException) -> BaseException:
    """The first exception of ``exc`` that is not a group (for a message)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
