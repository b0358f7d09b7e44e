"""Rendered pages kept for the next requests, and what a request's page cost.

A :class:`Shelf` keeps rendered pages by key (template, path, query), the least
recently asked going first; each :class:`Kept` page carries the version of the
stored games it shows, when it was made, its entity tag (a digest of its text: two
renderings alike have the same tag, whatever their versions) and what its rendering
cost. A :class:`Timing` is that cost, split into the wait for a worker thread, the
queries of the database, the rest of building the page's values, and the template's
rendering; the pages answer it in a ``Server-Timing`` header
(https://www.w3.org/TR/server-timing/), with ``total`` (the whole request in the
handler) and how the page was found: ``hit`` (kept and current), ``stale`` (kept,
its next version rendering behind), ``joined`` (rendered for another request that
came first), ``miss`` (rendered for this one).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Final, Generic, TypeVar

import attrs
import trio

__all__ = ["Flight", "Kept", "Rendered", "Shelf", "Timing", "entity_tag"]

Version = tuple[int, int, int]
K = TypeVar("K")
V = TypeVar("V")

#: How a page was found, in the order of their cost.
HOW: Final = ("hit", "stale", "joined", "miss")


@attrs.define
class Timing:
    """What a page's rendering cost, in seconds (0 when not rendered for the request)."""

    queue: float = 0.0
    sql: float = 0.0
    values: float = 0.0
    render: float = 0.0
    how: str = "miss"

    def header(self, total: float) -> str:
        """The value of a ``Server-Timing`` header, in milliseconds; ``values`` is the
        building of the values less their queries."""
        parts = [f"total;dur={total * 1000:.1f}"]
        if self.how in ("joined", "miss"):
            parts += [f"queue;dur={self.queue * 1000:.1f}", f"sql;dur={self.sql * 1000:.1f}",
                      f"values;dur={max(0.0, self.values - self.sql) * 1000:.1f}",
                      f"render;dur={self.render * 1000:.1f}"]
        parts.append(f'cache;desc="{self.how}"')
        return ", ".join(parts)


def entity_tag(text: str | bytes) -> str:
    """The ETag of a page: a digest of its text (or of its UTF-8)."""
    data = text.encode() if isinstance(text, str) else text
    return f'"{hashlib.blake2b(data, digest_size=12).hexdigest()}"'


@attrs.frozen
class Rendered:
    """A page just rendered: its text encoded (UTF-8, in the worker thread that rendered
    it: a kept page is sent as it is, the event loop encodes nothing), its tag and its
    cost."""

    body: bytes
    tag: str
    timing: Timing


@attrs.frozen
class Kept:
    """A rendered page every visitor sees alike: the version it shows, and when."""

    version: Version
    page: Rendered
    made: float


@attrs.define
class Flight:
    """A shared page being rendered, for the requests that wait for it."""

    version: Version
    done: trio.Event = attrs.Factory(trio.Event)
    page: Rendered | None = None


class Shelf(Generic[K, V]):
    """At most ``size`` kept pages (or parts of pages), the least recently asked for
    going first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._pages: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        kept = self._pages.get(key)
        if kept is not None:
            self._pages.move_to_end(key)
        return kept

    def put(self, key: K, kept: V) -> None:
        self._pages[key] = kept
        self._pages.move_to_end(key)
        while len(self._pages) > self.size:
            self._pages.popitem(last=False)

    def clear(self) -> None:
        self._pages.clear()

    def __len__(self) -> int:
        return len(self._pages)
