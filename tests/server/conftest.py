"""Fixtures of the server tests (helpers in tests/served.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
from served import Factory, Served, served_factory


@pytest.fixture
def make_server(tmp_path: Path, nursery: trio.Nursery,
                monkeypatch: pytest.MonkeyPatch) -> Factory:
    return served_factory(tmp_path, nursery, monkeypatch)


@pytest.fixture
async def served(make_server: Factory) -> AsyncIterator[Served]:
    yield await make_server()
