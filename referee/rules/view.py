"""``view(state, seat)``: the only way from a game state to a bot.

A view holds the seat's own hand and public facts, nothing else: no other hand, no
deck order, no seed. Other seats' draws appear as counts, never as cards. The result is
plain data (str, int, bool, None, lists, dicts) ready for msgpack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import cards as C
from .phases import PHASE_NAMES

if TYPE_CHECKING:
    from .state import Event, GameState


def view(state: GameState, seat: int, since: int = 0) -> dict[str, Any]:
    """The private view of ``seat``, with the public events from index ``since`` on
    (pass the previous ``len(state.events)`` to get only what is new)."""
    return {
        "seat": seat,
        "players": state.players,
        "hand": [C.NAMES[c] for c in state.hand(seat)],  # hand() is sorted already
        "hand_sizes": list(state.sizes),
        "active": list(state.active),
        "stages": None if state.stages is None else list(state.stages),
        "leading_card": C.NAMES[state.lead],
        "top_card": C.NAMES[state.discard[-1]],
        "color": C.COLORS[state.color],
        "direction": state.direction,
        "turn": state.turn,
        "phase": PHASE_NAMES[state.phase],
        "pending_draw": state.pending,
        "open_run": None if state.open_run < 0 else C.COLORS[state.open_run],
        "draw_pile": len(state.draw_pile),
        "discard_pile": len(state.discard),
        "declared_last_card": state.declared and seat == state.turn,
        "action_count": state.action_count,
        "events": [event_for(e, seat) for e in state.events[since:]],
    }


def event_for(event: Event, seat: int | None) -> dict[str, Any]:
    """An event as the given seat may see it (``seat=None``: the referee's full view)."""
    kind = event[0]
    if kind == "play":
        out: dict[str, Any] = {"type": "play", "seat": event[1], "card": C.NAMES[event[2]]}
        if event[2] == C.CHANGE_COLOR:
            out["color"] = C.COLORS[event[3]]
        return out
    if kind == "draw":
        out = {"type": "draw", "seat": event[1], "count": event[2], "reason": event[3]}
        if seat is None or seat == event[1]:
            out["cards"] = C.sorted_names(event[4])
        return out
    if kind == "play_combo":
        return {"type": kind, "seat": event[1], "color": C.COLORS[event[2]]}
    if kind == "run_end":
        return {"type": kind, "seat": event[1], "closed": event[2]}
    if kind == "reshuffle":
        return {"type": kind, "draw_pile": event[1]}
    if kind == "hands_passed":
        return {"type": kind, "direction": event[1]}
    if kind == "stage":
        return {"type": kind, "seat": event[1], "stage": event[2]}
    if kind == "forfeit":
        return {"type": kind, "seat": event[1], "reason": event[2]}
    # skip, end_turn, last_card, break, win
    return {"type": kind, "seat": event[1]}
