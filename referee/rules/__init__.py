"""The pure Super Taki rules core: no I/O, no clock, randomness only from a seed.

>>> from referee.rules import new_game
>>> game = new_game(players=3, seed=7)
>>> while not game.is_over:
...     for seat in game.to_act():
...         game.apply(game.legal_actions(seat)[0], seat)
"""

from . import cards
from .actions import Action
from .config import PRESETS, RULES_REVISION, Rules, Scoring
from .determinize import determinize
from .errors import GameOverError, IllegalActionError, RulesError
from .phases import PHASE_NAMES
from .results import EndReason, Forfeit, GameResult
from .state import GameState, new_game
from .view import event_for, events_since, view

__all__ = [
    "PHASE_NAMES",
    "PRESETS",
    "RULES_REVISION",
    "Action",
    "EndReason",
    "Forfeit",
    "GameOverError",
    "GameResult",
    "GameState",
    "IllegalActionError",
    "Rules",
    "RulesError",
    "Scoring",
    "cards",
    "determinize",
    "event_for",
    "events_since",
    "new_game",
    "view",
]
