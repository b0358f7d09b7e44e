"""Build a game state from a described position, for tests, puzzles and bot authors.

>>> from referee.rules.position import position
>>> game = position(hands=[["red:5", "king"], ["blue:+2"]], lead="red:3")
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from . import cards as C
from .config import Rules
from .phases import PLAY
from .state import GameState, new_game

CardLike = str | int


def _code(card: CardLike) -> int:
    return card if isinstance(card, int) else C.parse(card)


def position(
    hands: Sequence[Sequence[CardLike]],
    lead: CardLike,
    *,
    color: str | None = None,
    on_top: Sequence[CardLike] = (),
    draw_pile: Sequence[CardLike] | None = None,
    draw_pile_size: int | None = None,
    turn: int = 0,
    direction: int = 1,
    pending: int = 0,
    open_run: str | None = None,
    rules: Rules | None = None,
    seed: int = 0,
) -> GameState:
    """A game at the start of ``turn``'s turn with the given hands and Leading Card.

    ``on_top`` are transparent cards lying on the Leading Card. ``draw_pile`` lists
    the next cards to be drawn, first drawn first; the rest of the deck lies under them,
    shuffled by ``seed``. With ``draw_pile_size`` only that many cards stay in the draw
    pile and the others go to the discard pile under the Leading Card. Every card of the
    deck is somewhere, so the position is a real game."""
    state = new_game(len(hands), seed, rules)
    deck = state.rules.deck_cards()
    remaining = list(deck)

    def use(card: CardLike) -> int:
        code = _code(card)
        try:
            remaining.remove(code)
        except ValueError:
            raise ValueError(f"the deck has no more {C.NAMES[code]!r} for this position") from None
        return code

    state.hands = [{} for _ in hands]
    for seat, hand in enumerate(hands):
        for card in hand:
            code = use(card)
            state.hands[seat][code] = state.hands[seat].get(code, 0) + 1
        state.sizes[seat] = len(hand)
    lead_code = use(lead)
    top = [use(c) for c in on_top]
    chosen = [use(c) for c in draw_pile] if draw_pile is not None else []
    random.Random(seed).shuffle(remaining)
    below: list[int] = []
    if draw_pile_size is not None:
        keep = max(0, draw_pile_size - len(chosen))
        below = remaining[keep:]
        remaining = remaining[:keep]
    state.draw_pile = remaining + list(reversed(chosen))
    state.discard = [*below, lead_code, *top]
    state.lead = lead_code
    state.color = C.parse_color(color) if color else C.COLOR_OF[lead_code]
    if state.color < 0:
        raise ValueError("a colorless Leading Card needs an explicit color")
    state.turn = turn
    state.direction = direction
    state.pending = pending
    state.open_run = C.parse_color(open_run) if open_run else C.NO_COLOR
    state.phase = PLAY
    assert state.card_count() == len(deck)
    return state


__all__ = ["GameState", "position"]
