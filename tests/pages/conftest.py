"""Fixtures of the pages' tests (helpers in tests/pages_helpers.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio
from pages_helpers import Browsers
from served import Served, served_factory

from referee.server.pages import site
from referee.server.pages.site import Site


@pytest.fixture
async def served(tmp_path: Path, nursery: trio.Nursery,
                 monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Served]:
    monkeypatch.setattr(site, "REFRESH_S", 0.0)  # every request reads the newest games
    monkeypatch.setattr(site, "STALE_S", 0.0)  # and waits for its page of them
    yield await served_factory(tmp_path, nursery, monkeypatch)()


@pytest.fixture
async def browsers(served: Served) -> AsyncIterator[Browsers]:
    made = Browsers(served)
    yield made
    await made.close()


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The pages rendered, by template; every rendering must run in a worker thread,
    never on the Trio thread."""
    counted: Counter[str] = Counter()
    render = Site.render

    def counting(self: Site, template: str, **context: Any) -> str:
        counted[template] += 1
        trio.from_thread.check_cancelled()  # raises on the Trio thread
        return render(self, template, **context)

    monkeypatch.setattr(Site, "render", counting)
    return counted
