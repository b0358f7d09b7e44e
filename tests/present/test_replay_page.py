"""The replay page in Chromium: exact seeds, a crash's stderr kept short with the whole
text a click away, controls that stay in place, "last card!" where it mattered, links to
a step, a result kept hidden until the end, and each decision's answer time; and
rendering many replays in one process."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from referee.core.replay import Replay
from referee.present.render import render_html, replay_data
from referee.rules import Rules

SEED = 2**62 + 12345  # beyond 2**53: a JavaScript number would lose its last digits
MASTER = 2**61 + 999
STDERR = "Traceback (most recent call last):\n  File \"bot.py\", line 3\nRuntimeError: " \
         + "x" * 200


def timed_replay(crash_at: int = 30) -> Replay:
    """A 2-player game of random legal actions, each with its answer time, in which
    seat 1 crashes after ``crash_at`` actions with a long stderr."""
    replay = Replay("timed", SEED, Rules(), ["steady", "crashy"], master_seed=MASTER)
    state = replay.new_game()
    rng = random.Random(5)
    while not state.is_over:
        if len(replay.log) == crash_at:
            replay.record_forfeit(1, "crash", STDERR)
            state.forfeit(1, "crash", STDERR)
            continue
        seat = state.to_act()[0]
        action = rng.choice(state.legal_actions(seat))
        replay.record_action(seat, action, True, ms=round(rng.uniform(1, 90), 1))
        state.apply(action, seat, last_card=True)
    replay.finish(state.result())
    return replay


def page_of(replay: Replay, tmp_path: Path, open_page: Any, suffix: str = "",
            **size: int) -> tuple[Any, list[str]]:
    target = tmp_path / "game.html"
    target.write_text(render_html(replay), encoding="utf-8")
    page, problems = open_page(target, **size)
    if suffix:
        page.goto(target.as_uri() + suffix)
    return page, problems


def step_shown(page: Any) -> int:
    return int(page.inner_text("#step-no").split()[1])


def test_seeds_are_shown_exactly(open_page: Any, tmp_path: Path) -> None:
    replay = timed_replay()
    data = replay_data(replay)
    assert data["seed"] == str(SEED) and data["master_seed"] == str(MASTER)
    page, problems = page_of(replay, tmp_path, open_page)
    meta = page.inner_text("#meta")
    assert f"seed {SEED} " in meta and f"master seed {MASTER} " in meta
    assert problems == []


def test_a_crash_shows_a_short_detail_and_the_whole_text_on_request(
    open_page: Any, tmp_path: Path
) -> None:
    replay = timed_replay()
    data = replay_data(replay)
    crash = next(r for r in data["ranking"] if r["forfeit"] == "crash")
    assert crash["short"] == "Traceback (most recent call last):\u2026"
    assert data["steps"][31]["label"] == (
        "seat 1 (crashy) forfeits (crash: Traceback (most recent call last):\u2026)")
    page, problems = page_of(replay, tmp_path, open_page)
    page.keyboard.press("End")
    for where in ("#ranking", '#hands .hand[data-seat="1"]'):
        box = page.locator(where)
        assert "Traceback (most recent call last):\u2026" in box.inner_text()
        full = box.locator("details.full")
        assert full.count() == 1 and not full.evaluate("d => d.open")
        assert not box.locator("details.full pre").is_visible()
        full.locator("summary").click()
        assert "RuntimeError: " + "x" * 200 in box.locator("details.full pre").inner_text()
    assert problems == []


def test_stepping_keeps_the_window_still_on_a_small_screen(
    open_page: Any, tmp_path: Path
) -> None:
    replay = timed_replay(crash_at=10_000)  # a game played to its end
    steps = len(replay.log)
    assert steps > 40
    page, problems = page_of(replay, tmp_path, open_page, width=1280, height=720)
    positions = set()
    for _ in range(steps):
        page.keyboard.press("ArrowRight")
        positions.add(page.evaluate("window.scrollY"))
    assert positions == {0}
    assert step_shown(page) == steps
    # The log followed: its current line is inside its scrolled box.
    inside = page.evaluate("""() => {
        const log = document.getElementById("log"), item = log.querySelector(".current");
        const a = log.getBoundingClientRect(), b = item.getBoundingClientRect();
        return b.top >= a.top - 1 && b.bottom <= a.bottom + 1; }""")
    assert inside
    # Clicking the next button again and again: the button stays under the pointer.
    before = page.locator("#next").bounding_box()
    page.keyboard.press("Home")
    for _ in range(10):
        page.locator("#next").click()
    assert page.locator("#next").bounding_box() == before
    assert step_shown(page) == 10
    assert problems == []


def test_last_card_is_told_only_where_it_mattered() -> None:
    replay = timed_replay(crash_at=10_000)  # played to a win: someone got down to one card
    data = replay_data(replay)
    told = [step for step in data["steps"][1:] if "last card!" in step["label"]]
    assert told, "the game has a play that leaves one card"
    for step in told:
        assert step["sizes"][step["entry"]["seat"]] == 1
    quiet = [step for step in data["steps"][1:] if "action" in (step["entry"] or {})
             and step["sizes"][step["entry"]["seat"]] != 1]
    assert quiet and all("last card!" not in step["label"] for step in quiet)


def test_a_link_opens_a_step_and_the_address_follows(open_page: Any, tmp_path: Path) -> None:
    page, problems = page_of(timed_replay(), tmp_path, open_page, "#step=12")
    assert step_shown(page) == 12
    page.keyboard.press("ArrowRight")
    assert page.evaluate("location.hash") == "#step=13"
    assert page.get_attribute("#permalink", "href") == "#step=13"
    page.evaluate("location.hash = '#step=3'")
    page.wait_for_function("document.getElementById('step-no').textContent.startsWith('step 3 ')")
    assert problems == []


def test_the_result_can_wait_for_the_end(open_page: Any, tmp_path: Path) -> None:
    replay = timed_replay()
    page, problems = page_of(replay, tmp_path, open_page, "#step=5&hide=result")
    assert page.is_checked("#hide-result")
    assert not page.locator("#result").is_visible()
    page.keyboard.press("End")
    assert page.locator("#result").is_visible()
    assert page.evaluate("location.hash") == f"#step={len(replay.log)}&hide=result"
    page.keyboard.press("Home")
    page.uncheck("#hide-result")
    assert page.locator("#result").is_visible()
    assert page.evaluate("location.hash") == "#step=0"
    assert problems == []


def test_a_link_opens_the_game_from_a_seat(open_page: Any, tmp_path: Path) -> None:
    page, problems = page_of(timed_replay(), tmp_path, open_page, "#step=3&seat=1")
    assert step_shown(page) == 3
    assert page.input_value("#viewer") == "1"
    backs = page.locator('.hand[data-seat="0"] .card.back')
    assert backs.count() == page.locator('.hand[data-seat="0"] .card').count() > 0
    assert page.locator('.hand[data-seat="1"] .card.back').count() == 0
    page.keyboard.press("ArrowRight")
    assert page.evaluate("location.hash") == "#step=4&seat=1"
    page2, problems2 = page_of(timed_replay(), tmp_path, open_page, "#step=3&seat=9")
    assert page2.input_value("#viewer") == "-1"
    assert problems == [] and problems2 == []


def test_each_decision_shows_its_answer_time(open_page: Any, tmp_path: Path) -> None:
    replay = timed_replay()
    page, problems = page_of(replay, tmp_path, open_page, "#step=1")
    ms = replay.log[0]["ms"]
    assert page.inner_text("#label").endswith(f"answered in {ms} ms")
    assert page.locator("#log li").nth(1).locator(".ms").inner_text() == f"{ms} ms"
    crash_line = page.locator("#log li").nth(31)
    assert crash_line.locator(".ms").count() == 0  # a forfeit took no answer
    untimed = Replay.from_wire(json.loads(json.dumps(replay.to_wire())))
    for entry in untimed.log:
        entry.pop("ms", None)
    page2, problems2 = page_of(untimed, tmp_path, open_page, "#step=1")
    assert "answered in" not in page2.inner_text("#label")
    assert problems == [] and problems2 == []


def referee() -> list[str]:
    return [str(Path(sys.executable).with_name("taki-referee"))]


def test_many_replays_render_in_one_command(tmp_path: Path) -> None:
    sources = []
    for k in range(5):
        replay = timed_replay(crash_at=20 + k)
        replay.game_id = f"g{k}"
        path = tmp_path / "replays" / f"g{k}.json"
        replay.save(path)
        sources.append(path)
    out = tmp_path / "pages"
    done = subprocess.run([*referee(), "replay", "render", *map(str, sources), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == [f"g{k}.html" for k in range(5)]
    assert done.stdout.split() == [str(out / f"g{k}.html") for k in range(5)]
    # Without -o, each page goes beside its replay; a bad file does not stop the others.
    bad = tmp_path / "replays" / "bad.json"
    bad.write_text("{}")
    done = subprocess.run([*referee(), "replay", "render", str(bad), *map(str, sources)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert all(s.with_suffix(".html").is_file() for s in sources)
    assert "bad.json: not a taki replay" in done.stderr
    assert "1 of 6 replays could not be rendered" in done.stderr
