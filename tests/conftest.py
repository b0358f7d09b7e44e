"""Fixtures shared by the test modules."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Property tests judge their inputs, never the machine's speed: on a shared or loaded
# machine a wall-time deadline or the too-slow health check fails a correct test.
settings.register_profile(
    "referee", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# The fast tier (./tasks quick) tries a quarter of each property test's examples; the
# whole suite (./tasks test) tries them all. A failing example is kept in .hypothesis/
# and tried first by either.
settings.register_profile("quick", settings.get_profile("referee"), max_examples=25)
settings.load_profile("referee")

#: Debian's Chromium, which ``./tasks test`` installs; the browser tests fail without it.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

PageOpener = Callable[..., tuple[Any, list[str]]]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that drives the browser is slow (``./tasks quick`` leaves it out), whether
    it is marked or not."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium driven by Playwright, closed after each test module so that
    tests which check for leftover child processes never see the browser's."""
    from playwright import sync_api

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is needed for the browser tests: ./tasks test installs it")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def open_page(browser: Any) -> PageOpener:
    """``open_page(path, width=1400, height=1000)``: a page showing a local file. Any
    request it makes to a network is refused and listed, with every script error and
    console error, in the list returned beside the page."""

    def open_(path: Path, width: int = 1400, height: int = 1000) -> tuple[Any, list[str]]:
        page = browser.new_page(viewport={"width": width, "height": height})
        problems: list[str] = []

        def refuse(route: Any) -> None:
            if route.request.url.startswith("file://"):
                route.continue_()
            else:
                problems.append(f"request to {route.request.url}")
                route.abort()

        page.route("**/*", refuse)
        page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.goto(path.as_uri())
        return page, problems

    return open_


@pytest.fixture
def uncontained(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Bots run as they are, not in a pid namespace of their own under bwrap
    (``TAKI_REFEREE_CONTAIN=off``): for the tests of what the referee does with a bot's
    own process and pipes when nothing stands between them."""
    from referee.shell.sandbox import CONTAIN_VARIABLE, containment

    monkeypatch.setenv(CONTAIN_VARIABLE, "off")
    containment.cache_clear()
    yield
    monkeypatch.undo()
    containment.cache_clear()
