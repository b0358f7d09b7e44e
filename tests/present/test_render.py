"""The replay viewer: the per-step data re-simulated from a replay, the self-contained
page, and the page itself driven in Chromium (keyboard, seat view, slider).

The browser tests use Debian's Chromium at /usr/bin/chromium (``./tasks test`` installs
it); a missing browser fails them rather than skipping them.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.core.replay import Replay, ReplayError, replay_states, verify
from referee.present.render import describe_entry, render_html, replay_data, replay_steps
from referee.rules import Rules, event_for

REPO = Path(__file__).resolve().parents[2]


def played_replay(seed: int = 11, forfeit_at: int = 25) -> Replay:
    """A 3-player game of random legal actions in which seat 2 times out after
    ``forfeit_at`` actions (the first seed from ``seed`` on whose game lasts that long)."""
    while True:
        replay = Replay(f"game-{seed}", seed, Rules(), ["greedy", "random", "slow"])
        state = replay.new_game()
        rng = random.Random(seed)
        while not state.is_over:
            if len(replay.log) == forfeit_at:
                replay.record_forfeit(2, "timeout", "no answer within 500 ms")
                state.forfeit(2, "timeout", "no answer within 500 ms")
                continue
            seat = state.to_act()[0]
            action = rng.choice(state.legal_actions(seat))
            last_card = rng.random() < 0.9
            replay.record_action(seat, action, last_card)
            state.apply(action, seat, last_card=last_card)
        if len(replay.log) > forfeit_at + 10:
            replay.finish(state.result())
            return replay
        seed += 1


def state_after(replay: Replay, entries: int) -> Any:
    """The game after the first ``entries`` log entries, re-simulated on its own."""
    return replay_states(Replay(replay.game_id, replay.seed, replay.rules, replay.bots,
                                replay.first_seat, replay.log[:entries]))


@pytest.fixture(scope="module")
def replay() -> Replay:
    return played_replay()


# ------------------------------------------------------------------- pure data


def test_one_step_per_log_entry_after_the_deal(replay: Replay) -> None:
    steps = replay_steps(replay)
    assert len(steps) == len(replay.log) + 1
    assert steps[0]["entry"] is None
    assert [s["entry"] for s in steps[1:]] == replay.log


def test_every_step_matches_the_re_simulated_state(replay: Replay) -> None:
    steps = replay_steps(replay)
    deck = len(replay.rules.deck_cards())
    for k in (0, 1, 7, len(replay.log) // 2, len(replay.log)):
        state = state_after(replay, k)
        step = steps[k]
        assert step["sizes"] == state.sizes
        assert [len(h) for h in step["hands"]] == state.sizes
        assert step["draw_pile"] == len(state.draw_pile)
        assert step["turn"] == state.turn
        assert step["direction"] == state.direction
        assert step["pending"] == state.pending
        assert sum(step["sizes"]) + step["draw_pile"] + step["discard_pile"] == deck


def test_the_events_of_all_steps_are_the_games_events(replay: Replay) -> None:
    final = replay_states(replay)
    shown = [e for step in replay_steps(replay) for e in step["events"]]
    assert shown == [event_for(e, None) for e in final.events]


def test_data_has_the_verified_ranking_and_the_forfeit(replay: Replay) -> None:
    result = verify(replay)
    data = replay_data(replay)
    assert data["winner"] == result.winner
    assert [r["seat"] for r in data["ranking"]] == result.order()
    slow = next(r for r in data["ranking"] if r["seat"] == 2)
    assert slow["forfeit"] == "timeout"
    assert slow["detail"] == "no answer within 500 ms"
    assert slow["place"] == 3
    forfeit_step = data["steps"][26]
    assert forfeit_step["active"] == [True, True, False]
    assert forfeit_step["label"] == "seat 2 (slow) forfeits (timeout: no answer within 500 ms)"


def test_entries_in_words() -> None:
    bots = ["a", "b"]
    play = {"seat": 1, "action": {"kind": "play", "card": "change_color", "color": "red"},
            "last_card": True}
    assert describe_entry(play, bots) == 'seat 1 (b) plays change_color, names red ("last card!")'
    draw = {"seat": 0, "action": {"kind": "draw", "count": 4}, "last_card": False}
    assert describe_entry(draw, bots) == "seat 0 (a) draws 4 cards"
    close = {"seat": 0, "action": {"kind": "close_run"}, "last_card": False}
    assert describe_entry(close, bots) == "seat 0 (a) closes the run"


def test_an_entry_that_does_not_apply_is_a_replay_error(replay: Replay) -> None:
    broken = Replay.from_wire(replay.to_wire())
    broken.log[3] = {"seat": broken.log[3].get("seat", 0),
                     "action": {"kind": "play", "card": "king"}, "last_card": False}
    with pytest.raises(ReplayError, match="log entry 3"):
        replay_steps(broken)


def test_the_page_is_self_contained_and_its_data_survives_any_name(replay: Replay) -> None:
    hostile = Replay.from_wire(replay.to_wire())
    hostile.bots[1] = "</script><script>alert(1)</script>&amp;"
    page = render_html(hostile)
    assert not re.search(r"https?://", page)
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=|<link\b|@import|url\(", page)
    assert page.count("</script>") == 2  # the data and the viewer, nothing injected
    raw = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>',
                    page, re.S)
    assert raw is not None
    assert json.loads(raw.group(1)) == json.loads(json.dumps(replay_data(hostile)))


# --------------------------------------------------------------------- browser




def shown_sizes(page: Any) -> list[int]:
    return [int(s) for s in page.locator("#hands .hand").evaluate_all(
        "hands => hands.map(h => h.dataset.size)")]


def shown_cards(page: Any, seat: int) -> tuple[list[str], int]:
    """The card faces shown in a seat's hand, and the number of card backs."""
    hand = page.locator(f'#hands .hand[data-seat="{seat}"]')
    faces = hand.locator("[data-card]").evaluate_all("cards => cards.map(c => c.dataset.card)")
    return faces, hand.locator(".card.back").count()


def shown_step(page: Any) -> int:
    match = re.match(r"step (\d+) / (\d+)", page.inner_text("#step-no"))
    assert match is not None
    return int(match.group(1))


def test_the_viewer_steps_through_the_game(
    open_page: Any, replay: Replay, tmp_path: Path
) -> None:
    target = tmp_path / "game.html"
    target.write_text(render_html(replay), encoding="utf-8")
    page, problems = open_page(target)
    last = len(replay.log)

    assert shown_step(page) == 0
    assert shown_sizes(page) == state_after(replay, 0).sizes

    # The keyboard: five steps forward, one back.
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert shown_step(page) == 4
    state = state_after(replay, 4)
    assert shown_sizes(page) == state.sizes
    for seat in range(3):
        assert shown_cards(page, seat) == (replay_steps(replay)[4]["hands"][seat], 0)
    assert page.inner_text("#draw-pile") == f"draw pile: {len(state.draw_pile)}"
    assert page.locator("#log li.current").inner_text().startswith("4")

    # One seat's private view: its own cards, and only backs for the other hands.
    page.select_option("#viewer", "1")
    for seat in (0, 2):
        faces, backs = shown_cards(page, seat)
        assert faces == []
        assert backs == state.sizes[seat]
        hand_html = page.locator(f'#hands .hand[data-seat="{seat}"]').inner_html()
        assert not any(card in hand_html for card in set(replay_steps(replay)[4]["hands"][seat]))
    assert shown_cards(page, 1)[0] == replay_steps(replay)[4]["hands"][1]
    page.focus("#viewer")  # the arrow keys step even while the seat list has the focus
    page.keyboard.press("ArrowRight")
    assert shown_step(page) == 5
    assert page.input_value("#viewer") == "1"
    assert shown_cards(page, 0) == ([], state_after(replay, 5).sizes[0])

    # Another seat's draw shows as a count; a click on the log jumps to it.
    steps = replay_steps(replay)
    k = next(i for i, s in enumerate(steps)
             if any(e["type"] == "draw" and e["seat"] != 1 for e in s["events"]))
    page.locator("#log li").nth(k).click()
    assert shown_step(page) == k
    draws = page.locator("#events li", has_text="draws")
    assert draws.count() >= 1
    assert draws.locator(".chip").count() == 0

    # The slider: a click half-way along jumps there.
    slider = page.locator("#slider")
    box = slider.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    middle = shown_step(page)
    assert abs(middle - last / 2) <= max(3, last // 10)
    assert int(slider.input_value()) == middle
    assert shown_sizes(page) == state_after(replay, middle).sizes

    # End: the forfeit, the winner, the final ranking.
    page.select_option("#viewer", "-1")
    page.keyboard.press("End")
    assert shown_step(page) == last
    final = state_after(replay, last)
    assert shown_sizes(page) == final.sizes
    assert "forfeit: timeout" in page.locator('#hands .hand[data-seat="2"]').inner_text()
    winner = page.locator(f'#hands .hand[data-seat="{final.winner}"] .badge.win')
    assert winner.count() == 1
    assert page.locator("#ranking tr").count() == 1 + 3
    page.screenshot(path=str(tmp_path / "viewer-end.png"), full_page=True)
    page.keyboard.press("Home")
    assert shown_step(page) == 0
    page.keyboard.press("ArrowRight")
    page.screenshot(path=str(tmp_path / "viewer-step1.png"), full_page=True)
    assert problems == []
    page.close()


def referee_command() -> list[str]:
    script = Path(sys.executable).parent / "taki-referee"
    return [str(script)] if script.exists() else [sys.executable, "-m", "referee.cli"]


def test_render_command_on_a_real_match(open_page: Any, tmp_path: Path) -> None:
    bots = ["python sample_bots/greedy_bot.py", "python sample_bots/random_bot.py 3"]
    replays = tmp_path / "replays"
    subprocess.run(
        [*referee_command(), "match", *bots, "--games", "1", "--move-ms", "5000",
         "--replay-dir", str(replays), "--log-dir", str(tmp_path / "logs"), "--json"],
        cwd=REPO, check=True, capture_output=True, timeout=60,
    )
    (source,) = replays.glob("*.json")
    target = tmp_path / "page.html"
    done = subprocess.run([*referee_command(), "replay", "render", str(source), "-o", str(target)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    replay = Replay.load(source)
    page, problems = open_page(target)
    page.keyboard.press("End")
    assert shown_step(page) == len(replay.log)
    assert shown_sizes(page) == replay_states(replay).sizes
    page.screenshot(path=str(tmp_path / "match-end.png"), full_page=True)
    assert problems == []
    page.close()

    # A file that is no replay is reported in one line, exit status 2.
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    failed = subprocess.run([*referee_command(), "replay", "render", str(bad)],
                            capture_output=True, text=True, timeout=60)
    assert failed.returncode == 2
    assert "not a taki replay" in " ".join(failed.stderr.split())
