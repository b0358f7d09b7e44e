"""Fixed-size numbers for a learning agent: a player's view as a vector, and every
action of the game as one index of a fixed action space (docs/rl.md has the layout)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from taki_protocol import MAX_PLAYERS

from referee.rules import PHASE_NAMES, Action, cards
from referee.rules import actions as A

__all__ = ["ACTION_COUNT", "OBSERVATION_SIZE", "action_index", "encode_view"]

CARDS = len(cards.NAMES)
COLORS = len(cards.COLORS)
#: Action indices: a play of each card code (the Change Color's own index is never
#: legal: it is played naming a color), a Change Color naming each color, the 3+Plus
#: combo in each color, then the actions without a card.
PLAY_CHANGE_COLOR = CARDS
PLAY_COMBO = PLAY_CHANGE_COLOR + COLORS
DRAW = PLAY_COMBO + COLORS
_SIMPLE = {A.END_TURN: DRAW + 1, A.CLOSE_RUN: DRAW + 2, A.LEAVE_RUN_OPEN: DRAW + 3,
           A.BREAK: DRAW + 4, A.PASS: DRAW + 5}
ACTION_COUNT = DRAW + 6

# Observation layout (floats in [0, 1]); each block's offset follows the one before.
_HAND = 0                                   # copies of each card code in hand, / 4
_LEADING = _HAND + CARDS                    # the Leading Card, one-hot
_TOP = _LEADING + CARDS                     # the card on top of the pile, one-hot
_COLOR = _TOP + CARDS                       # the current color, one-hot
_DIRECTION = _COLOR + COLORS                # 1: up the seats
_PHASE = _DIRECTION + 1                     # one-hot over referee.rules.PHASE_NAMES
_PENDING = _PHASE + len(PHASE_NAMES)        # cards a +2 chain makes draw, / 40
_OPEN_RUN = _PENDING + 1                    # the color of an open TAKI run, one-hot
_SEATS = _OPEN_RUN + COLORS                 # per seat from one's own on: 5 features
_SEAT_FEATURES = 5                          # present, active, to act, hand size / 40, stage / 8
_PILES = _SEATS + MAX_PLAYERS * _SEAT_FEATURES  # draw pile / 116, discard pile / 116
_DECLARED = _PILES + 2                      # one declared "last card!"
OBSERVATION_SIZE = _DECLARED + 1


def action_index(action: Action) -> int:
    """The index of ``action`` in the fixed action space."""
    if action.kind == A.PLAY:
        if action.card == cards.CHANGE_COLOR:
            return PLAY_CHANGE_COLOR + action.color
        return action.card
    if action.kind == A.PLAY_COMBO:
        return PLAY_COMBO + action.color
    if action.kind == A.DRAW:
        return DRAW
    return _SIMPLE[action.kind]


def encode_view(view: dict[str, Any], to_act: bool) -> NDArray[np.float32]:
    """A player's view (``referee.rules.view``) as a vector of ``OBSERVATION_SIZE``
    floats; ``to_act``: whether the player is asked to act now."""
    out = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
    for name in view["hand"]:
        out[_HAND + cards.parse(name)] += 0.25  # a deck holds at most 4 of a code
    out[_LEADING + cards.parse(view["leading_card"])] = 1
    out[_TOP + cards.parse(view["top_card"])] = 1
    out[_COLOR + cards.COLORS.index(view["color"])] = 1
    out[_DIRECTION] = view["direction"] > 0
    out[_PHASE + PHASE_NAMES.index(view["phase"])] = 1
    out[_PENDING] = min(1.0, view["pending_draw"] / 40)
    if view["open_run"] is not None:
        out[_OPEN_RUN + cards.COLORS.index(view["open_run"])] = 1
    players, me = view["players"], view["seat"]
    for k in range(players):
        seat = (me + k) % players
        base = _SEATS + k * _SEAT_FEATURES
        out[base] = 1
        out[base + 1] = view["active"][seat]
        out[base + 2] = to_act if k == 0 else 0
        out[base + 3] = min(1.0, view["hand_sizes"][seat] / 40)
        if view["stages"] is not None:
            out[base + 4] = view["stages"][seat] / 8
    out[_PILES] = min(1.0, view["draw_pile"] / 116)
    out[_PILES + 1] = min(1.0, view["discard_pile"] / 116)
    out[_DECLARED] = bool(view.get("declared_last_card"))
    return out
