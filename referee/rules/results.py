"""Results: ranking and points (R22, R23)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from .state import GameState


class EndReason(StrEnum):
    """Why a game ended. A ``StrEnum``: results, replays, the wire and the database hold
    the plain strings."""

    #: A player emptied their hand (R7), or reached stage 1 and emptied it (R24).
    WIN = "win"
    #: Everyone else forfeited (D13).
    LAST_STANDING = "last_standing"
    #: The action limit was reached (R21).
    LIMIT = "limit"


@attrs.frozen
class Forfeit:
    seat: int
    reason: str
    detail: str = ""


@attrs.frozen
class GameResult:
    """How a game ended. ``places[seat]`` is 1 for the best; ties share a place."""

    places: tuple[int, ...]
    #: Points left in each hand (for a forfeited seat: its hand when it left).
    points: tuple[int, ...]
    winner: int | None
    #: Why the game ended; None while it runs.
    reason: EndReason | None
    forfeits: tuple[Forfeit, ...]
    actions: int
    #: Pyramid stage per seat, or None.
    stages: tuple[int, ...] | None = None

    def order(self) -> list[int]:
        """Seats from first place to last."""
        return sorted(range(len(self.places)), key=lambda seat: (self.places[seat], seat))


def hand_points(state: GameState, seat: int) -> int:
    scoring = state.rules.scoring
    return sum(scoring.points(code) * n for code, n in state.hands[seat].items())


def game_result(state: GameState) -> GameResult:
    n = state.players
    forfeit_points = {seat: pts for seat, _reason, _detail, pts in state.forfeits}
    points = tuple(
        forfeit_points[seat] if seat in forfeit_points else hand_points(state, seat)
        for seat in range(n)
    )
    stages = state.stages

    def key(seat: int) -> tuple[int, int, int]:
        # Winner first, then (Pyramid: lowest stage first) fewest points first.
        return (0 if seat == state.winner else 1, stages[seat] if stages else 0, points[seat])

    places = [0] * n
    standing = sorted((p for p in range(n) if state.active[p]), key=key)
    for i, seat in enumerate(standing):
        prev = standing[i - 1] if i else None
        places[seat] = places[prev] if prev is not None and key(prev) == key(seat) else i + 1
    # R23: forfeited seats rank below everyone still in; earlier forfeits rank lower.
    place = len(standing)
    for seat, _reason, _detail, _points in reversed(state.forfeits):
        place += 1
        places[seat] = place
    return GameResult(
        places=tuple(places),
        points=points,
        winner=state.winner,
        reason=state.end_reason,
        forfeits=tuple(Forfeit(s, r, d) for s, r, d, _p in state.forfeits),
        actions=state.action_count,
        stages=None if stages is None else tuple(stages),
    )

