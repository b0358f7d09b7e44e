"""Phases: which kind of decision a game is waiting for."""

from __future__ import annotations

PLAY = 0  # an ordinary decision at the start of a turn
RUN = 1  # inside the turn player's own TAKI run
AGAIN = 2  # play again after a Plus
KING = 3  # the King's free action
REACT = 4  # the +3 Breaker window: every other seat answers at once
OVER = 5  # the game has ended

PHASE_NAMES: tuple[str, ...] = ("play", "run", "again", "king", "react", "over")
