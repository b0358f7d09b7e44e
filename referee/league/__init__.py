"""Leagues: the runner, the result store, the bot check, the SPRT runner and the
executors (local, Dask). May import referee.match, referee.config and referee.ratings."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .botcheck import require_bots
    from .rating_input import rated_games, stored_series
    from .runner import Executor, LeagueJob, league_size, record_of
    from .session import choose_executor, league_executor, play_league
    from .sprt_run import FORFEITS, game_score, run_sprt
    from .sqlite_support import Transaction, explain
    from .store import BUSY_TIMEOUT_MS, GameRecord, Meeting, ResultStore, StoreError
else:
    __getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
