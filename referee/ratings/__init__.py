"""Pure statistics: Elo fits with bootstrap intervals and the SPRT. Imports only the
standard library, attrs and (the fit from pair counts) NumPy."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .elo import RatedGame
    from .leaderboard import BotRating, RatingReport, rate
    from .models import MULTIPLAYER_MODEL, RATING_MODELS, RatingModel, model_named
    from .online import Belief, OnlineRatings, misorder
    from .pair_fit import PairCounts, PairGames, pair_elos, pair_history, rate_pair_counts
    from .sprt import Sprt, SprtState
else:
    __getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
