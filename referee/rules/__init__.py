"""The pure Super Taki rules core: no I/O, no clock, randomness only from a seed.

>>> from referee.rules import new_game
>>> game = new_game(players=3, seed=7)
>>> while not game.is_over:
...     for seat in game.to_act():
...         game.apply(game.legal_actions(seat)[0], seat)
"""

from . import actions, cards
from .actions import Action
from .config import PRESETS, RULES_REVISION, DealError, Rules, Scoring
from .determinize import determinize
from .errors import GameOverError, IllegalActionError, RulesError
from .events import Drew
from .formats import SeriesRules, competition_places, seat_penalties
from .phases import PHASE_NAMES, REACT
from .position import position
from .results import EndReason, Forfeit, GameResult
from .state import GameState, new_game
from .view import event_for, events_since, view

__all__ = [
    "PHASE_NAMES",
    "PRESETS",
    "REACT",
    "RULES_REVISION",
    "Action",
    "DealError",
    "Drew",
    "EndReason",
    "Forfeit",
    "GameOverError",
    "GameResult",
    "GameState",
    "IllegalActionError",
    "Rules",
    "RulesError",
    "Scoring",
    "SeriesRules",
    "actions",
    "cards",
    "competition_places",
    "determinize",
    "event_for",
    "events_since",
    "new_game",
    "position",
    "seat_penalties",
    "view",
]
