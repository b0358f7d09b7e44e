"""Applying actions and forfeits: what every card does (R5-R20, R23)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import actions as A
from . import cards as C
from .events import (
    ComboPlayed,
    Forfeited,
    HandsPassed,
    Played,
    RunEnded,
    SeatEvent,
    Staged,
)
from .phases import AGAIN, KING, OVER, PLAY, REACT, RUN
from .results import EndReason, hand_points

if TYPE_CHECKING:
    from .actions import Action
    from .state import GameState

_COLOR = C.COLOR_OF
_FIG = C.FIGURE_OF
_THREE_FIG = C.NUMBER_VALUES.index(3)


def apply_action(s: GameState, seat: int, action: Action, last_card: bool) -> None:
    kind = action.kind
    phase = s.phase
    if phase == REACT:
        s.reactors.remove(seat)
        if kind == A.BREAK:
            s.breakers.add(seat)
            if last_card:
                s.react_declared.add(seat)
        if not s.reactors:
            _resolve_window(s)
    else:
        if last_card and not s.declared:
            s.declared = True
            s.events.append(SeatEvent("last_card", seat))
        if kind == A.PLAY:
            _play(s, seat, action, phase)
        elif kind == A.DRAW:
            if s.pending:
                count = s.pending
                s.pending = 0
                s.draw(seat, count, "chain")
            else:
                s.draw(seat, 1, "plus_again" if phase == AGAIN else "no_play")
            s.end_turn()
        elif kind == A.CLOSE_RUN or kind == A.LEAVE_RUN_OPEN:
            closed = kind == A.CLOSE_RUN
            s.open_run = -1 if closed else s.run_color
            s.events.append(RunEnded("run_end", seat, closed))
            _act(s, s.run_last, False)
        elif kind == A.END_TURN:
            s.events.append(SeatEvent("end_turn", seat))
            s.end_turn()
        elif kind == A.PLAY_COMBO:
            _play_combo(s, seat, action.color)
    s.action_count += 1
    if s.action_count >= s.rules.action_limit and s.phase != OVER:
        s.finish(None, EndReason.LIMIT)


def _play(s: GameState, seat: int, action: Action, phase: int) -> None:
    code = action.card
    s.take(seat, code)
    fig = _FIG[code]
    if phase == RUN:
        if code == C.KING or code == C.CHANGE_COLOR:
            # R12: a King or Change Color ends the run and counts as closing it.
            s.open_run = -1
            s.events.append(RunEnded("run_end", seat, True))
            _land(s, seat, action)
        else:
            _add_to_run(s, seat, code)
        return
    if s.pending:
        # R10, R15, R16: answering an active +2 chain.
        if code == C.PLUS_THREE:
            s.discard.append(code)
            s.events.append(Played("play", seat, code, None))
            s.pending += 2
            _hand_emptied(s, seat)
            if s.phase != OVER:
                _open_window(s, seat, chain=True)
            return
        if code == C.KING:
            s.pending = 0
        else:
            s.pending += 2
            _place(s, seat, action)
            _hand_emptied(s, seat)
            if s.phase != OVER:
                s.end_turn()
            return
        _land(s, seat, action)
        return
    if phase == PLAY and s.open_run >= 0 and (
        _COLOR[code] == s.open_run or code == C.SUPER_TAKI
    ):
        # R13: continuing an open run at the start of a turn.
        _start_run(s, seat, code, s.open_run)
        return
    if fig == C.TAKI or code == C.SUPER_TAKI:
        # R12, R14: a TAKI opens a run in its color, a SuperTaki in the current color.
        _start_run(s, seat, code, _COLOR[code] if fig == C.TAKI else s.color)
        return
    _land(s, seat, action)


def _place(s: GameState, seat: int, action: Action) -> None:
    """Put a played card on the discard pile and update the Leading Card and color."""
    code = action.card
    s.discard.append(code)
    color = _COLOR[code]
    if code == C.CHANGE_COLOR:
        color = action.color
        s.events.append(Played("play", seat, code, color))
    else:
        s.events.append(Played("play", seat, code, None))
    if C.IS_TRANSPARENT[code]:
        return
    s.lead = code
    if code == C.KING or code == C.SUPER_TAKI:
        color = -1
    if s.open_run >= 0 and (color != s.open_run or code == C.CHANGE_COLOR):
        # R13: a card of another color closes an open run. A King or a Change Color
        # counts as another color (even one naming the run's color); transparent cards
        # do not.
        s.open_run = -1
    if color >= 0:
        s.color = color


def _land(s: GameState, seat: int, action: Action) -> None:
    """Place a single card outside a run and carry out what it does."""
    _place(s, seat, action)
    code = action.card
    if code == C.PLUS_THREE:
        _hand_emptied(s, seat)
        if s.phase != OVER:
            _open_window(s, seat, chain=False)
        return
    if _FIG[code] == C.PLUS and s.sizes[seat] == 0:
        # R7: a Plus never finishes a hand; its owner must play again (and draws).
        s.phase = AGAIN
        return
    if _hand_emptied(s, seat):
        # Pyramid: the card still acts, but the turn ends (no King free action).
        if s.phase != OVER:
            _act(s, code, True)
        return
    _act(s, code, False)


def _act(s: GameState, code: int, turn_must_end: bool) -> None:
    """What a card does once it is the last card played (R8-R19)."""
    fig = _FIG[code]
    if fig == C.STOP:
        s.end_turn(skip=True)
    elif fig == C.PLUS_TWO:
        s.pending += 2
        s.end_turn()
    elif fig == C.CHANGE_DIRECTION:
        s.direction = -s.direction
        s.end_turn()
    elif fig == C.PLUS:
        if turn_must_end:
            s.end_turn()
        else:
            s.phase = AGAIN
    elif code == C.KING:
        if turn_must_end:
            s.end_turn()
        else:
            s.phase = KING
    elif code == C.BREAKER:
        # R18: a +3 Breaker in one's own turn: draw 3, the turn ends.
        s.draw(s.turn, 3, "breaker")
        s.end_turn()
    elif code == C.CRAZY:
        _pass_hands(s)
        s.end_turn()
    else:
        s.end_turn()


def _start_run(s: GameState, seat: int, code: int, color: int) -> None:
    s.discard.append(code)
    s.lead = code
    s.events.append(Played("play", seat, code, None))
    if s.open_run >= 0 and color != s.open_run:
        s.open_run = -1
    s.color = color
    s.run_color = color
    s.run_last = code
    # R13: a TAKI (or SuperTaki) alone on top of the pile cannot be closed.
    s.run_can_close = not (_FIG[code] == C.TAKI or code == C.SUPER_TAKI)
    s.phase = RUN
    if s.sizes[seat] == 0:
        _run_emptied_hand(s, seat)


def _add_to_run(s: GameState, seat: int, code: int) -> None:
    s.discard.append(code)
    s.lead = code
    s.events.append(Played("play", seat, code, None))
    s.run_last = code
    s.run_can_close = True
    if s.sizes[seat] == 0:
        _run_emptied_hand(s, seat)


def _run_emptied_hand(s: GameState, seat: int) -> None:
    """The last card of the hand went into a run: the run ends there (closed, except
    a lone TAKI). A Plus is the exception (R7): its owner still ends the run and must
    play again."""
    if _FIG[s.run_last] == C.PLUS:
        return
    _hand_emptied(s, seat)
    if s.phase == OVER:
        return
    closed = s.run_can_close
    s.open_run = -1 if closed else s.run_color
    s.events.append(RunEnded("run_end", seat, closed))
    _act(s, s.run_last, True)


def _hand_emptied(s: GameState, seat: int) -> bool:
    """R7, R24: an empty hand wins, or in the Pyramid Tournament moves the seat down a
    stage and refills its hand. True when the hand was empty."""
    if s.sizes[seat]:
        return False
    stages = s.stages
    if stages is None or stages[seat] <= 1:
        s.finish(seat, EndReason.WIN)
        return True
    stages[seat] -= 1
    s.events.append(Staged("stage", seat, stages[seat]))
    s.draw(seat, stages[seat], "stage")
    return True


def _open_window(s: GameState, seat: int, chain: bool) -> None:
    """R17: after a +3 every other seat is asked at once whether it breaks it."""
    s.phase = REACT
    s.window_seat = seat
    s.window_chain = chain
    s.reactors = s.seats_after(seat)
    s.breakers = set()
    s.react_declared = set()
    if not s.reactors:
        _resolve_window(s)


def _resolve_window(s: GameState) -> None:
    seat = s.window_seat
    order = s.seats_after(seat)
    breaker = next((p for p in order if p in s.breakers), None)
    s.phase = PLAY
    if breaker is not None:
        s.take(breaker, C.BREAKER)
        s.discard.append(C.BREAKER)
        s.events.append(SeatEvent("break", breaker))
        if breaker in s.react_declared:
            s.events.append(SeatEvent("last_card", breaker))
        _hand_emptied(s, breaker)
        if s.phase == OVER:
            return
        if (  # D1: the last-card rule applies to a breaker too (and D6 in the Pyramid)
            s.sizes[breaker] == 1
            and breaker not in s.react_declared
            and s.rules.last_card_penalty
        ):
            s.draw(breaker, s.rules.last_card_penalty, "last_card")
        count = s.pending if s.window_chain else 3
        s.pending = 0
        if s.active[seat]:
            s.draw(seat, count, "broken")
    elif not s.window_chain:
        for p in order:
            s.draw(p, 3, "plus3")
    s.end_turn()


def _pass_hands(s: GameState) -> None:
    """Crazy Card variant: every hand moves to the next seat in the current direction."""
    seats = [p for p in range(s.players) if s.active[p]]
    hands = {p: s.hands[p] for p in seats}
    for p in seats:
        s.hands[s.next_seat(p)] = hands[p]
    for p in seats:
        s.sizes[p] = sum(s.hands[p].values())
    s.events.append(HandsPassed("hands_passed", s.direction))


def _play_combo(s: GameState, seat: int, color: int) -> None:
    """The old "+3 rule": a 3 and a Plus of one color make every other player draw 3."""
    three = C.card(color, _THREE_FIG)
    plus = C.card(color, C.PLUS)
    s.take(seat, three)
    s.take(seat, plus)
    s.discard += (three, plus)
    s.lead = plus
    if s.open_run >= 0 and color != s.open_run:
        s.open_run = -1
    s.color = color
    s.events.append(ComboPlayed("play_combo", seat, color))
    if _hand_emptied(s, seat) and s.phase == OVER:
        return
    for p in s.seats_after(seat):
        s.draw(p, 3, "plus3")
    s.end_turn()


def forfeit(s: GameState, seat: int, reason: str, detail: str) -> None:
    """R23: the seat leaves at once; its hand goes to the bottom of the draw pile."""
    s.active[seat] = False
    s.n_active -= 1
    left = s.hand(seat)
    s.forfeits.append((seat, reason, detail, hand_points(s, seat)))
    s.draw_pile[:0] = left
    s.hands[seat] = {}
    s.sizes[seat] = 0
    s.events.append(Forfeited("forfeit", seat, reason))
    if s.n_active < 2:
        remaining = next(p for p in range(s.players) if s.active[p])
        s.finish(remaining, EndReason.LAST_STANDING)
        return
    if s.phase == REACT:
        if seat in s.reactors:
            s.reactors.remove(seat)
        s.breakers.discard(seat)
        if not s.reactors:
            _resolve_window(s)
    elif seat == s.turn:
        # The turn ends at once: a run in progress ends closed, an active +2 chain
        # passes to the next seat.
        if s.phase == RUN:
            s.open_run = -1
        s.start_turn(s.next_seat(seat))
