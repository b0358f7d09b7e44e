"""The search sample bot's own pieces: what it infers from the events, how it deals the
unseen cards again, and that it searches within the time a request allows."""

from __future__ import annotations

import importlib.util
import random
import sys
import time
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from referee.rules import Rules, cards, determinize, new_game, view

BOT = Path(__file__).resolve().parents[2] / "sample_bots" / "ismcts_bot.py"


@pytest.fixture
def bot() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ismcts_bot_under_test", BOT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.pop(spec.name, None)
    spec.loader.exec_module(module)
    module.rng.seed(5)
    return module


def play_until_no_play_draw(seed: int, players: int) -> tuple[Any, int]:
    """A game played by first legal actions until some seat draws for want of a play."""
    state = new_game(players, seed)
    while not state.is_over:
        seat = state.to_act()[0]
        before = len(state.events)
        state.apply(state.legal_actions(seat)[0], seat)
        if any(e.kind == "draw" and e.reason == "no_play" for e in state.events[before:]):
            return state, seat
    raise AssertionError("no draw for want of a play")


@pytest.mark.parametrize("seed", range(12))
def test_lacking_names_the_cards_a_seat_could_not_play(bot: ModuleType, seed: int) -> None:
    state, drawer = play_until_no_play_draw(seed, 3)
    observer = next(s for s in range(3) if s != drawer)
    bot.Game.rules, bot.Game.first_lead = Rules(), None
    lacks = bot.lacking(view(state, observer))
    playable, drawn = lacks[drawer]
    assert drawn == 1
    # The drawer's hand before the draw (its hand now, less the card it drew) held
    # none of the cards the bot calls playable: the inference never rules out the truth.
    last_draw = next(e for e in reversed(state.events) if e.kind == "draw")
    held = Counter(state.hand(drawer))
    held.subtract(last_draw.cards)
    assert not any(held[code] > 0 and code in playable for code in held)
    # Every colorless card is playable on anything, so a no-play draw rules them all out.
    assert set(range(cards.CHANGE_COLOR, cards.CARD_COUNT)) <= playable


def test_lacking_is_empty_with_voluntary_draws(bot: ModuleType) -> None:
    state, drawer = play_until_no_play_draw(3, 2)
    bot.Game.rules = Rules(voluntary_draw=True)
    assert bot.lacking(view(state, 1 - drawer)) == {}


@pytest.mark.parametrize("players", [2, 4, 10])
def test_redeal_keeps_sizes_cards_and_the_inference(bot: ModuleType, players: int) -> None:
    state, drawer = play_until_no_play_draw(players, players)
    observer = next(s for s in range(players) if s != drawer)
    seen = view(state, observer)
    world = determinize(seen, random.Random(1), Rules())
    lacks = bot.lacking(seen)
    unseen = Counter(world.draw_pile)
    for other in range(players):
        if other != observer:
            unseen.update(world.hands[other])
    for _ in range(20):
        bot.redeal(world, observer, lacks)
        again = Counter(world.draw_pile)
        for other in range(players):
            assert sum(world.hands[other].values()) == world.sizes[other]
            if other != observer:
                again.update(world.hands[other])
        assert again == unseen
        assert world.hands[observer] == state.hands[observer]
        playable, drawn = lacks[drawer]
        old = sum(n for code, n in world.hands[drawer].items() if code not in playable)
        assert old >= min(world.sizes[drawer] - drawn, world.sizes[drawer])


def test_search_answers_within_its_budget(bot: ModuleType) -> None:
    state = new_game(2, 11)
    seat = state.to_act()[0]
    legal = [a.to_wire() for a in state.legal_actions(seat)]
    bot.on_request({"deadline_ms": 150})
    assert bot.Game.budget_s == pytest.approx(0.05)
    start = time.monotonic()
    index, last_card = bot.choose(view(state, seat), legal)
    assert 0 <= index < len(legal) and last_card
    assert time.monotonic() - start < 5  # a bound for a hung search, not a speed figure
