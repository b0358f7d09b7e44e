"""``view(state, seat)``: the only way from a game state to a bot.

A view holds the seat's own hand and public facts, nothing else: no other hand, no
deck order, no seed. Other seats' draws appear as counts, never as cards. The result is
plain data (str, int, bool, None, lists, dicts) ready for msgpack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import cards as C
from .events import (
    ComboPlayed,
    Drew,
    Event,
    Forfeited,
    HandsPassed,
    Played,
    Reshuffled,
    RunEnded,
    SeatEvent,
    Staged,
)
from .phases import PHASE_NAMES

if TYPE_CHECKING:
    from .state import GameState


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
        "events": events_since(state, seat, since),
    }


def events_since(state: GameState, seat: int, since: int) -> list[dict[str, Any]]:
    """The events from index ``since`` on, as ``seat`` may see them."""
    return [event_for(e, seat) for e in state.events[since:]]


def event_for(event: Event, seat: int | None) -> dict[str, Any]:
    """An event as the given seat may see it (``seat=None``: the referee's full view)."""
    match event:
        case Played(seat=who, card=card, color=color):
            out: dict[str, Any] = {"type": "play", "seat": who, "card": C.NAMES[card]}
            if card == C.CHANGE_COLOR and color is not None:
                out["color"] = C.COLORS[color]
            return out
        case Drew(seat=who, number=count, reason=reason, cards=cards):
            out = {"type": "draw", "seat": who, "count": count, "reason": reason}
            if seat is None or seat == who:
                out["cards"] = C.sorted_names(cards)
            return out
        case ComboPlayed(kind=kind, seat=who, color=color):
            return {"type": kind, "seat": who, "color": C.COLORS[color]}
        case RunEnded(kind=kind, seat=who, closed=closed):
            return {"type": kind, "seat": who, "closed": closed}
        case Reshuffled(kind=kind, draw_pile=size):
            return {"type": kind, "draw_pile": size}
        case HandsPassed(kind=kind, direction=direction):
            return {"type": kind, "direction": direction}
        case Staged(kind=kind, seat=who, stage=stage):
            return {"type": kind, "seat": who, "stage": stage}
        case Forfeited(kind=kind, seat=who, reason=reason):
            return {"type": kind, "seat": who, "reason": reason}
        case SeatEvent(kind=kind, seat=who):  # skip, end_turn, last_card, break, win
            return {"type": kind, "seat": who}
    raise TypeError(f"not an event: {event!r}")


def event_from_wire(data: dict[str, Any]) -> Event:
    """The event that :func:`event_for` showed as ``data``. A draw's cards are the ones
    the map lists (none when the seat was not allowed to see them)."""
    kind = data["type"]
    match kind:
        case "play":
            color = data.get("color")
            return Played(kind, data["seat"], C.parse(data["card"]), _color(color))
        case "draw":
            drawn = tuple(C.parse(card) for card in data.get("cards", ()))
            return Drew(kind, data["seat"], data["count"], data["reason"], drawn)
        case "play_combo":
            return ComboPlayed(kind, data["seat"], C.parse_color(data["color"]))
        case "run_end":
            return RunEnded(kind, data["seat"], data["closed"])
        case "reshuffle":
            return Reshuffled(kind, data["draw_pile"])
        case "hands_passed":
            return HandsPassed(kind, data["direction"])
        case "stage":
            return Staged(kind, data["seat"], data["stage"])
        case "forfeit":
            return Forfeited(kind, data["seat"], data["reason"])
        case "skip" | "end_turn" | "last_card" | "break" | "win":
            return SeatEvent(kind, data["seat"])
    raise ValueError(f"not an event: {data!r}")


def _color(name: str | None) -> int | None:
    return None if name is None else C.parse_color(name)
