"""Legal actions: which decisions a seat may take now (R4-R19)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import actions as A
from . import cards as C
from .phases import KING, OVER, REACT, RUN

if TYPE_CHECKING:
    from .actions import Action
    from .state import GameState

_COLOR = C.COLOR_OF
_FIG = C.FIGURE_OF
_THREE_FIG = C.NUMBER_VALUES.index(3)


def _plays_of(code: int) -> tuple[Action, ...]:
    if code == C.CHANGE_COLOR:
        return A.CHANGE_COLOR_PLAYS
    play = A.PLAY_CARD[code]
    assert play is not None
    return (play,)


#: Every play of each card code (a Change Color carries the color it names).
PLAYS_OF: tuple[tuple[Action, ...], ...] = tuple(_plays_of(c) for c in range(C.CARD_COUNT))
#: The play of a card that carries no choice (every card but the Change Color).
_PLAY: tuple[Action, ...] = tuple(plays[0] for plays in PLAYS_OF)


def legal_actions(state: GameState, seat: int) -> list[Action]:
    phase = state.phase
    if phase == REACT:
        if seat not in state.reactors:
            return []
        if C.BREAKER in state.hands[seat]:
            return [A.BREAK_ACTION, A.PASS_ACTION]
        return [A.PASS_ACTION]
    if phase == OVER or seat != state.turn:
        return []
    hand = state.hands[seat]
    if phase == RUN:
        return _run_actions(state, hand)
    if phase == KING:
        out = [a for code in hand for a in PLAYS_OF[code]]
        if state.rules.plus3_rule:
            out += _combos(state, hand, anywhere=True)
        out.append(A.END_TURN_ACTION)
        return out
    if state.pending:
        return _chain_answers(state, hand)
    out = []
    color = state.color
    lead_fig = _FIG[state.lead]
    for code in hand:
        c = _COLOR[code]
        if c >= 0:
            if c == color or _FIG[code] == lead_fig:
                out.append(_PLAY[code])
        else:
            # Colorless cards are legal on any card outside an active +2 chain
            # (R11, R14, R15, R16, R18; the Crazy Card variant likewise).
            out += PLAYS_OF[code]
    if state.rules.plus3_rule:
        out += _combos(state, hand, anywhere=False)
    if not out or state.rules.voluntary_draw:
        out.append(A.draw(1))
    return out


def _chain_answers(state: GameState, hand: dict[int, int]) -> list[Action]:
    """R10, R15, R16: on an active +2 chain, a +2, a +3 or a King, or draw the total."""
    out = []
    for code in hand:
        if _FIG[code] == C.PLUS_TWO or code == C.PLUS_THREE or code == C.KING:
            out.append(_PLAY[code])
    out.append(A.draw(state.pending))
    return out


def _run_actions(state: GameState, hand: dict[int, int]) -> list[Action]:
    """R12, R13: cards of the run's color, a SuperTaki, or a King or Change Color to
    end it; or end it (closed, or left open)."""
    run_color = state.run_color
    out = []
    for code in hand:
        if _COLOR[code] == run_color or code == C.SUPER_TAKI or code == C.KING:
            out.append(_PLAY[code])
        elif code == C.CHANGE_COLOR:
            out += A.CHANGE_COLOR_PLAYS
    if state.run_can_close:
        out.append(A.CLOSE_RUN_ACTION)
    out.append(A.LEAVE_RUN_OPEN_ACTION)
    return out


def _combos(state: GameState, hand: dict[int, int], anywhere: bool) -> list[Action]:
    """The old "+3 rule": a 3 and a Plus of one color together."""
    out = []
    for color in range(4):
        three = C.card(color, _THREE_FIG)
        plus = C.card(color, C.PLUS)
        if three in hand and plus in hand:
            lead_fig = _FIG[state.lead]
            if anywhere or color == state.color or lead_fig in (_THREE_FIG, C.PLUS):
                out.append(A.COMBOS[color])
    return out


__all__ = ["PLAYS_OF", "legal_actions"]
