"""Hosting a competition: participants, their submissions (unpacked, built and checked
in the sandbox), the continuous ladder among the bots that passed, its matchmaking and
the finals."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .accept import Accepted, UploadGate, accept_upload
    from .aggregates import Folded, Season, SeasonError
    from .bot_specs import bot_spec
    from .config import CompetitionConfig, load_competition
    from .disk import DiskGauge, is_disk_full
    from .errors import CompetitionError, Refusal, Refused
    from .finals import FinalsSettings, FinalStanding, run_finals
    from .finals_plan import FinalsPlan
    from .history import HistoryPoint, Snapshot, history_of, latest_fit, ranks_at, record_snapshot
    from .hosting import CompetitionHost, LadderHandle, check_sandbox
    from .ladder import LadderSettings, run_ladder
    from .ladder_control import GameLanded, LadderControl, LadderEvent, LiveRating
    from .log_budget import LogBudget, LogUsage, trim_logs
    from .meta import kept_season
    from .pipeline import process, run_pipeline
    from .planned_finals import (
        FINALS_REPORT,
        FinalsPhase,
        FinalsProgress,
        finals_db,
        finals_folder,
        finals_title,
        play_planned_finals,
        played_games,
        read_standings,
    )
    from .records import Participant, Status, Submission
    from .season import FORMAT, SeasonSecret, deal_of, deal_seed, wrong_deal
    from .season_counts import (
        SeasonRows,
        season_forfeits,
        season_pair_counts,
        season_rows,
        season_time_use,
    )
    from .sessions import IDLE_S, TOUCH_S, Role, SessionTable
    from .store import CompetitionStore
    from .tokens import digest, digests_match, organizer_token
    from .upload_keys import check_upload_key, new_upload_key
    from .workspace import Workspace, make_private
else:
    __getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
