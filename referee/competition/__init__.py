"""Hosting a competition: participants, their submissions (unpacked, built and checked
in the sandbox), the continuous ladder among the bots that passed, its matchmaking and
the finals."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .config import CompetitionConfig, load_competition
    from .errors import CompetitionError, Refusal, Refused
    from .finals import FinalsSettings, FinalStanding, run_finals
    from .finals_plan import FinalsPlan
    from .ladder import GameLanded, LadderControl, LadderSettings, run_ladder
    from .pipeline import (
        Workspace,
        accept_upload,
        bot_spec,
        check_upload_key,
        new_upload_key,
        run_pipeline,
    )
    from .records import Participant, Submission
    from .season import Season
    from .store import CompetitionStore
    from .tokens import digest, digests_match, organizer_token
else:
    __getattr__ = lazy_face(__name__, {
        "config": ("CompetitionConfig", "load_competition"),
        "errors": ("CompetitionError", "Refusal", "Refused"),
        "finals": ("FinalStanding", "FinalsSettings", "run_finals"),
        "finals_plan": ("FinalsPlan",),
        "ladder": ("GameLanded", "LadderControl", "LadderSettings", "run_ladder"),
        "pipeline": ("Workspace", "accept_upload", "bot_spec", "check_upload_key",
                     "new_upload_key", "run_pipeline"),
        "records": ("Participant", "Submission"),
        "season": ("Season",),
        "store": ("CompetitionStore",),
        "tokens": ("digest", "digests_match", "organizer_token"),
    })

__all__ = [
    "CompetitionConfig",
    "CompetitionError",
    "CompetitionStore",
    "FinalStanding",
    "FinalsPlan",
    "FinalsSettings",
    "GameLanded",
    "LadderControl",
    "LadderSettings",
    "Participant",
    "Refusal",
    "Refused",
    "Season",
    "Submission",
    "Workspace",
    "accept_upload",
    "bot_spec",
    "check_upload_key",
    "digest",
    "digests_match",
    "load_competition",
    "new_upload_key",
    "organizer_token",
    "run_finals",
    "run_ladder",
    "run_pipeline",
]
