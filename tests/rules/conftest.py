"""The ``palette`` fixture: a ruling test about a kind of card runs once per color."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from palette import P

from referee.rules import cards


@pytest.fixture(params=range(4), ids=list(cards.COLORS))
def palette(request: pytest.FixtureRequest) -> Iterator[None]:
    """Run the test with red standing for each color in turn (see tests/rules/palette.py);
    the id names the color red stands for."""
    P.shift = request.param
    yield
    P.shift = 0
