"""Hosting a competition: participants, their submissions (unpacked, built and checked
in the sandbox), the continuous ladder among the bots that passed, its matchmaking and
the finals."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .aggregates import Folded, Season, SeasonError
    from .config import CompetitionConfig, load_competition
    from .errors import CompetitionError, Refusal, Refused
    from .finals import FinalsSettings, FinalStanding, run_finals
    from .finals_plan import FinalsPlan
    from .hosting import CompetitionHost, LadderHandle, check_sandbox
    from .ladder import GameLanded, LadderControl, LadderSettings, run_ladder
    from .pipeline import (
        Workspace,
        accept_upload,
        bot_spec,
        check_upload_key,
        new_upload_key,
        process,
        run_pipeline,
    )
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
    from .records import Participant, Submission
    from .sessions import IDLE_S, TOUCH_S, Role, SessionTable
    from .store import CompetitionStore
    from .tokens import digest, digests_match, organizer_token
else:
    __getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
