"""Fixtures of the pages' tests (helpers in tests/pages_helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
from pages_helpers import Browsers
from served import Served, served_factory

from referee.server.pages import site


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
