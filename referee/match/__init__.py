"""One game between bots, and a unit of games: the referee loop that asks, checks and
applies. May import referee.shell, referee.core and referee.rules."""

from .game import Choice, GameReferee, GameVoided, replay_path, safe_filename
from .unit import play_unit

__all__ = [
    "Choice",
    "GameReferee",
    "GameVoided",
    "play_unit",
    "replay_path",
    "safe_filename",
]
