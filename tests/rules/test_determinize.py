"""``determinize(view, rng)``: a full game consistent with one seat's view, over random
games of 2-10 players, both presets and the variant flags."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import GameState, Rules, determinize, new_game, view
from referee.rules.config import DealError

FLAGS = [{}, {"crazy_card": True}, {"plus3_rule": True}, {"pyramid": True},
         {"voluntary_draw": True}, {"hand_size": 3}]


def played(seed: int, players: int, preset: str, flags: dict[str, object],
           actions: int) -> tuple[GameState, Rules]:
    rules = Rules.preset(preset, **flags)
    rules.check_deal(players)
    state = new_game(players, seed, rules)
    rng = random.Random(seed)
    for _ in range(actions):
        if state.is_over:
            break
        seat = state.to_act()[0]
        state.apply(rng.choice(state.legal_actions(seat)), seat, last_card=rng.random() < 0.8)
    return state, rules


def all_cards(state: GameState) -> Counter[int]:
    cards: Counter[int] = Counter(state.draw_pile)
    cards.update(state.discard)
    for seat in range(state.players):
        cards.update(state.hand(seat))
    return cards


@settings(max_examples=examples(150), deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 10),
    preset=st.sampled_from(["super-taki-2018", "super-taki-classic"]),
    flags=st.sampled_from(FLAGS),
    actions=st.integers(0, 200),
    who=st.integers(0, 9),
)
def test_the_determinized_game_gives_the_same_view(
    seed: int, players: int, preset: str, flags: dict[str, object], actions: int, who: int
) -> None:
    try:
        state, rules = played(seed, players, preset, flags, actions)
    except DealError:
        return
    seat = who % players
    seen = view(state, seat)
    world = determinize(seen, random.Random(seed), rules)
    assert view(world, seat) == seen
    # Every card of the deck is somewhere, once; the seat's hand is its own.
    assert all_cards(world) == Counter(rules.deck_cards())
    assert sorted(world.hand(seat)) == sorted(state.hand(seat))
    assert world.sizes == state.sizes
    if not state.is_over and seat in state.to_act():
        assert sorted(map(str, world.legal_actions(seat))) == sorted(
            map(str, state.legal_actions(seat)))
    # The world plays on under the rules, to its end.
    rng = random.Random(seed + 1)
    for _ in range(400):
        if world.is_over:
            break
        acting = world.to_act()[0]
        world.apply(rng.choice(world.legal_actions(acting)), acting, last_card=True)


def test_the_hidden_cards_are_dealt_at_random() -> None:
    state, rules = played(5, 4, "super-taki-2018", {}, 30)
    seen = view(state, 0)
    others = {tuple(sorted(determinize(seen, random.Random(k), rules).hand(1)))
              for k in range(20)}
    assert len(others) > 10  # many possible worlds, not one


def test_a_view_without_its_events_is_refused() -> None:
    state, rules = played(3, 3, "super-taki-2018", {}, 40)
    seen = view(state, 0, len(state.events) - 1)  # the last event only
    with pytest.raises(ValueError, match="pass every event of the game"):
        determinize(seen, random.Random(0), rules)
