"""``determinize(view, rng)``: a full game state consistent with what one seat sees.

Search under hidden information (information-set Monte Carlo tree search, and the like)
plays many possible worlds: each one a :class:`GameState` that the seat could not tell
from the real game. ``determinize`` builds one:

- the seat's own hand, every hand size, the draw and discard pile sizes and every public
  fact of the view (Leading Card, color, direction, turn, phase, +2 chain, open run,
  Pyramid stages, forfeits, events) are exactly the view's;
- the cards the seat has seen are where it saw them: its hand, and the discard pile
  rebuilt from the events (plays, combos, breaks, reshuffles);
- every other card (the unseen ones) is dealt at random to the other hands, in their
  sizes, and to the draw pile, in random order.

What a view does not say is filled in with what the rules allow: in a +3 Breaker window
every other seat is still to answer; inside a TAKI run, whether it may be closed follows
from the turn's plays. The first Leading Card of the game is not in a view once another
card covers it; a random unseen colored card stands for it. Cards the seat saw move
between other hands (Crazy Card) count as unseen.

The view must hold every event of the game: ``view(state, seat)`` gives them all; a bot
joins the ``events`` of its requests (each request brings those since the previous one).
A view whose events do not add up raises ``ValueError``.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from . import cards as C
from .config import Rules
from .events import ComboPlayed, Event, Forfeited, Played, Reshuffled, SeatEvent
from .phases import OVER, PHASE_NAMES, PLAY, REACT, RUN
from .results import EndReason
from .state import GameState, new_game
from .view import event_from_wire

#: A discard pile entry the events do not name (the first Leading Card, once covered).
_UNKNOWN = -1


def determinize(view: dict[str, Any], rng: random.Random, rules: Rules | None = None) -> GameState:
    """A random full game state that gives ``view`` again for ``view["seat"]``.

    ``rules`` are the game's rules (default: ``Rules()``), from its ``game_start``. The
    state has its own generator, seeded from ``rng``, for the reshuffles of the game
    played on from it."""
    if rules is None:
        rules = Rules()
    seat: int = view["seat"]
    events = [event_from_wire(e) for e in view["events"]]
    hand = [C.parse(card) for card in view["hand"]]
    lead = C.parse(view["leading_card"])
    discard = _discard_pile(events, lead)
    if len(discard) != view["discard_pile"] or discard[-1] != C.parse(view["top_card"]):
        raise ValueError(
            "the view's events do not rebuild its discard pile: pass every event of the game"
        )
    unseen = Counter(rules.deck_cards())
    unseen.subtract(hand)
    unseen.subtract(code for code in discard if code != _UNKNOWN)
    if any(n < 0 for n in unseen.values()):
        raise ValueError("the view shows more copies of a card than the deck holds")
    pool = list(unseen.elements())
    rng.shuffle(pool)
    for i, code in enumerate(discard):
        if code == _UNKNOWN:  # the first Leading Card: always a colored card (R2)
            discard[i] = pool.pop(next(j for j, c in enumerate(pool) if C.COLOR_OF[c] >= 0))

    state = new_game(view["players"], rng.getrandbits(64), rules)
    state.sizes = list(view["hand_sizes"])
    state.hands = [{} for _ in range(state.players)]
    for other, size in enumerate(state.sizes):
        cards = hand if other == seat else [pool.pop() for _ in range(size)]
        for code in cards:
            state.hands[other][code] = state.hands[other].get(code, 0) + 1
    if len(pool) != view["draw_pile"]:
        raise ValueError("the view's card counts do not add up to the deck")
    state.draw_pile = pool
    state.discard = discard
    _set_public(state, view, events, lead)
    return state


def _discard_pile(events: list[Event], lead: int) -> list[int]:
    """The discard pile as the events build it, bottom first, from the first Leading Card
    (``_UNKNOWN`` unless it still leads)."""
    pile = [_UNKNOWN]
    for event in events:
        match event:
            case Played(card=card):
                pile.append(card)
            case ComboPlayed(color=color):
                pile += (C.number(color, 3), C.card(color, C.PLUS))
            case SeatEvent(kind="break"):
                pile.append(C.BREAKER)
            case Reshuffled():
                del pile[: _lead_index(pile)]
    i = _lead_index(pile)
    if pile[i] == _UNKNOWN:
        pile[i] = lead
    return pile


def _lead_index(pile: list[int]) -> int:
    """Where the Leading Card lies: under the transparent cards on top (R20)."""
    i = len(pile) - 1
    while i > 0 and pile[i] != _UNKNOWN and C.IS_TRANSPARENT[pile[i]]:
        i -= 1
    return i


def _set_public(state: GameState, view: dict[str, Any], events: list[Event], lead: int) -> None:
    """The public fields of ``state``, from the view and its events."""
    state.active = list(view["active"])
    state.n_active = sum(state.active)
    state.stages = None if view["stages"] is None else list(view["stages"])
    state.lead = lead
    state.color = C.parse_color(view["color"])
    state.direction = view["direction"]
    state.turn = view["turn"]
    state.phase = PHASE_NAMES.index(view["phase"])
    state.pending = view["pending_draw"]
    state.open_run = C.NO_COLOR if view["open_run"] is None else C.parse_color(view["open_run"])
    state.action_count = view["action_count"]
    state.events = events
    state.forfeits = [(e.seat, e.reason, "", 0) for e in events if isinstance(e, Forfeited)]
    turn_events = _turn_events(events, state.turn)
    if view["seat"] == state.turn:
        state.declared = view["declared_last_card"]
    else:
        state.declared = state.phase != PLAY and any(e.kind == "last_card" for e in turn_events)
    if state.phase == RUN:
        plays = [e.card for e in turn_events if isinstance(e, Played)]
        state.run_color = state.color
        state.run_last = lead
        state.run_can_close = _run_can_close(plays, state.open_run >= 0)
    if state.phase == REACT:
        state.window_seat = state.turn
        state.window_chain = state.pending > 0
        state.reactors = state.seats_after(state.turn)
    if state.phase == OVER:
        winner = [e.seat for e in events if isinstance(e, SeatEvent) and e.kind == "win"]
        state.winner = winner[0] if winner else None
        if winner:
            state.end_reason = EndReason.WIN
        elif state.n_active < 2:
            state.end_reason = EndReason.LAST_STANDING
        else:
            state.end_reason = EndReason.LIMIT


def _turn_events(events: list[Event], turn: int) -> list[Event]:
    """The plays and "last card" declarations of the current turn, oldest first: the
    events at the end that are these, by the turn seat (any other event ends a turn, or
    ends a run with a ``run_end``)."""
    start = len(events)
    while start > 0:
        event = events[start - 1]
        if event.kind not in ("play", "last_card") or getattr(event, "seat", -1) != turn:
            break
        start -= 1
    return events[start:]


def _starts_run(code: int) -> bool:
    return C.FIGURE_OF[code] == C.TAKI or code == C.SUPER_TAKI


def _run_can_close(plays: list[int], continued: bool) -> bool:
    """R13: a run may be closed unless it is a lone TAKI or SuperTaki. A run that continues
    an open run (the open run is still set) began with the turn's first play; any other
    run began with the turn's first TAKI or SuperTaki (a Plus or King before it acted
    alone)."""
    start = 0 if continued else next(i for i, code in enumerate(plays) if _starts_run(code))
    return len(plays) - start > 1 or not _starts_run(plays[start])
