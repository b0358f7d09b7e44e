"""The pages in Chromium, against the real ``taki-referee serve`` on 127.0.0.1: the
organizer adds participants through the organizer's page; a participant uploads a bot
through the form, watches it pass its check, sees it on the leaderboard and its rating
move without reloading, opens one of its games and its stderr log; another participant
gets 403 for that log; the organizer starts the finals and their standings appear on the
finals page. The screenshots of docs/competition.md are taken here."""

from __future__ import annotations

import io
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from served import RANDOM_BOT

REPO = Path(__file__).resolve().parents[2]
#: Where the screenshots go: docs/images when asked (TAKI_SCREENSHOTS_DIR=docs/images,
#: to renew the ones docs/competition.md shows), else a folder of the temporary directory,
#: so that a test run leaves the work tree as it found it.
IMAGES = Path(os.environ.get("TAKI_SCREENSHOTS_DIR")
              or Path(tempfile.gettempdir()) / "taki-referee-screenshots")
TAKI = str(Path(sys.executable).with_name("taki-referee"))
COMPETITION = """\
[competition]
name = "Spring Cup"

[ladder]
deals = 1
concurrency = 2
placement_games = 4

[time]
move_ms = 2000
startup_ms = 15000
"""
#: A bot that says something on stderr, then plays as the random sample bot.
NOISY = """\
import runpy, sys
print("noisy starting: <b>not bold</b> & friends", file=sys.stderr, flush=True)
sys.argv = ["random_bot.py", sys.argv[1] if len(sys.argv) > 1 else "1"]
runpy.run_path("random_bot.py", run_name="__main__")
"""
WAIT_MS = 240_000


def archive(name: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for file, data in (("bot.toml", f'name = "{name}"\ncommand = "python noisy.py 1"\n'),
                           ("noisy.py", NOISY), ("random_bot.py", RANDOM_BOT.read_text())):
            info = tarfile.TarInfo(file)
            info.size = len(data.encode())
            tar.addfile(info, io.BytesIO(data.encode()))
    return buffer.getvalue()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """``taki-referee serve`` in a process of its own; its address."""
    (tmp_path / "competition.toml").write_text(COMPETITION)
    process = subprocess.Popen(
        [TAKI, "serve", "competition.toml", "--db", "competition.sqlite",
         "--listen", "127.0.0.1:0"], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: queue.Queue[str] = queue.Queue()
    said: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put("")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    url = None
    try:
        while url is None:
            line = lines.get(timeout=60)
            said.append(line)
            if not line:
                pytest.fail("serve did not start:\n" + "".join(said))
            found = re.search(r"serving on (http://\S+)", line)
            url = found.group(1) if found else None
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=10)


def new_page(browser: Any, url: str, problems: list[str]) -> Any:
    """A page of a browser context of its own (its own cookies), that refuses every
    request beyond the server and lists script errors."""
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()

    def refuse(route: Any) -> None:
        if route.request.url.startswith(url):
            route.continue_()
        else:
            problems.append(f"request to {route.request.url}")
            route.abort()

    page.route("**/*", refuse)
    page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
    page.set_default_timeout(WAIT_MS)
    return page


def sign_in(page: Any, url: str, token: str) -> None:
    page.goto(f"{url}/signin")
    page.fill("input[name=token]", token)
    page.click("#signin button")


def shoot(page: Any, name: str) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    path = IMAGES / f"pages-{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size < 250_000, f"{path} is {path.stat().st_size} bytes"


def upload(page: Any, tmp: Path, name: str) -> None:
    bundle = tmp / f"{name}.tar.gz"
    bundle.write_bytes(archive(name))
    page.set_input_files("#upload input[type=file]", str(bundle))
    page.click("#upload button")
    page.wait_for_url(re.compile(r"/me$"))


def passed(page: Any) -> None:
    """Wait until the page shows the submission built and checked: it must have passed."""
    page.wait_for_selector("#submissions tr.status-active, #submissions tr.status-rejected")
    row = page.locator("#submissions tr").nth(1)
    assert row.get_attribute("class") == "status-active", row.inner_text()


def test_organizer_participants_upload_leaderboard_game_and_log(
        browser: Any, server: str, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("serve needs bubblewrap: ./tasks test installs it")
    url, problems = server, []
    boss = new_page(browser, url, problems)
    sign_in(boss, url, (tmp_path / "organizer.token").read_text().strip())
    tokens = {}
    for name in ("alice", "bob"):
        boss.fill("#add-participant input[name=name]", name)
        boss.click("#add-participant button")
        tokens[name] = boss.inner_text("#new-token pre").strip()
        assert re.fullmatch(r"[0-9a-f]{64}", tokens[name])
    assert boss.locator("#participants tr[data-participant]").count() == 2
    shoot(boss, "organizer")

    alice, bob = new_page(browser, url, problems), new_page(browser, url, problems)
    sign_in(alice, url, tokens["alice"])
    sign_in(bob, url, tokens["bob"])
    upload(bob, tmp_path, "bee")
    upload(alice, tmp_path, "ace")
    # The submission's status changes on the page, which is never reloaded.
    alice.evaluate("window.notReloaded = true")
    passed(alice)
    assert alice.evaluate("window.notReloaded") is True
    assert "ace@1" in alice.inner_text("#submissions")
    shoot(alice, "participant")
    passed(bob)

    alice.goto(url)
    alice.wait_for_selector('#leaderboard tr[data-bot="ace@1"]')
    alice.evaluate("window.notReloaded = true")
    cell = '#leaderboard tr[data-bot="ace@1"] td.games'
    before = int(alice.inner_text(cell))
    elo = '#leaderboard tr[data-bot="ace@1"] td.elo'
    rating = alice.inner_text(elo)
    deadline = time.monotonic() + WAIT_MS / 1000
    # Polled from here: the page's policy lets no test script be evaluated in it.
    while int(alice.inner_text(cell)) < before + 4 or alice.inner_text(elo) == rating:
        assert time.monotonic() < deadline, "the leaderboard did not move"
        alice.wait_for_timeout(500)
    assert alice.evaluate("window.notReloaded") is True
    assert alice.locator('#leaderboard tr[data-bot="bee@1"]').count() == 1
    shoot(alice, "leaderboard")

    # The rating history fills as games land: the bot page charts it over dated axes.
    deadline = time.monotonic() + WAIT_MS / 1000
    alice.goto(url + "/bots/ace%401")
    while alice.locator("#rating-chart polyline").count() == 0:
        assert time.monotonic() < deadline, alice.inner_text("main")
        alice.wait_for_timeout(1000)
        alice.reload()
    assert "time (UTC)" in alice.inner_text("#rating-chart")
    alice.goto(url)
    alice.wait_for_selector('#leaderboard tr[data-bot="ace@1"] td.fitted')
    assert alice.inner_text('#leaderboard tr[data-bot="ace@1"] td.fitted') != "-"
    shoot(alice, "leaderboard")
    alice.goto(url + "/me")
    alice.wait_for_selector("#recent-games a")
    shoot(alice, "participant-games")
    alice.click('#submissions a[href="/bots/ace%401"]')
    alice.wait_for_selector("#games a")
    shoot(alice, "bot")
    alice.click("#games a")
    alice.wait_for_selector("iframe#viewer")
    frame = alice.frame_locator("iframe#viewer")
    frame.locator("#log li").first.wait_for()
    shoot(alice, "game")
    log_link = alice.locator("a.log-link")
    assert log_link.count() == 1
    log_url = url + log_link.get_attribute("href")
    log_link.click()
    alice.wait_for_selector("pre.log")
    text = alice.inner_text("pre.log")
    assert "noisy starting: <b>not bold</b> & friends" in text
    assert alice.locator("pre.log b").count() == 0
    shoot(alice, "log")

    refused = bob.goto(log_url)
    assert refused is not None and refused.status == 403
    assert "another participant" in bob.inner_text("#problem")

    # The organizer starts the finals from the page; the finals page shows the standings.
    boss.goto(url + "/organizer")
    boss.fill("#start-finals input[name=deals]", "1")
    boss.check("#start-finals input[name=confirm]")
    boss.click("#start-finals button")
    assert "of 2 games played" in boss.inner_text("#finals-progress")
    boss.goto(url + "/finals")
    deadline = time.monotonic() + WAIT_MS / 1000
    while boss.locator("#standings tbody tr").count() < 2:
        assert time.monotonic() < deadline, boss.inner_text("main")
        boss.wait_for_timeout(500)
        boss.reload()
    assert {"ace@1", "bee@1", "alice", "bob"} <= set(boss.inner_text("#standings").split())
    shoot(boss, "finals")
    games = boss.locator("#standings a").first.get_attribute("href")
    report = boss.goto(url + games)  # the bot's page of the finals report: its games
    assert report is not None and report.status == 200, games
    assert problems == []
