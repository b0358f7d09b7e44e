"""Hosting a competition: participants, their submissions (unpacked, built and checked
in the sandbox), the continuous ladder among the bots that passed, its matchmaking and
the finals."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .accept import Accepted, UploadGate, accept_upload
    from .bot_specs import bot_spec
    from .config import CompetitionConfig, load_competition
    from .disk import DiskGauge, is_disk_full
    from .errors import CompetitionError, Refusal, Refused
    from .finals import FinalsSettings, FinalStanding, run_finals
    from .finals_plan import FinalsPlan
    from .ladder import GameLanded, LadderControl, LadderSettings, run_ladder
    from .log_budget import LogBudget, LogUsage, trim_logs
    from .pipeline import run_pipeline
    from .records import Participant, Submission
    from .season import Season
    from .store import CompetitionStore
    from .tokens import digest, digests_match, organizer_token
    from .upload_keys import check_upload_key, new_upload_key
    from .workspace import Workspace, make_private
else:
    __getattr__ = lazy_face(__name__, {
        "config": ("CompetitionConfig", "load_competition"),
        "errors": ("CompetitionError", "Refusal", "Refused"),
        "finals": ("FinalStanding", "FinalsSettings", "run_finals"),
        "finals_plan": ("FinalsPlan",),
        "ladder": ("GameLanded", "LadderControl", "LadderSettings", "run_ladder"),
        "log_budget": ("LogBudget", "LogUsage", "trim_logs"),
        "accept": ("Accepted", "UploadGate", "accept_upload"),
        "bot_specs": ("bot_spec",),
        "disk": ("DiskGauge", "is_disk_full"),
        "pipeline": ("run_pipeline",),
        "records": ("Participant", "Submission"),
        "season": ("Season",),
        "store": ("CompetitionStore",),
        "tokens": ("digest", "digests_match", "organizer_token"),
        "upload_keys": ("check_upload_key", "new_upload_key"),
        "workspace": ("Workspace", "make_private"),
    })

__all__ = [
    "Accepted",
    "CompetitionConfig",
    "CompetitionError",
    "CompetitionStore",
    "DiskGauge",
    "FinalStanding",
    "FinalsPlan",
    "FinalsSettings",
    "GameLanded",
    "LadderControl",
    "LadderSettings",
    "LogBudget",
    "LogUsage",
    "Participant",
    "Refusal",
    "Refused",
    "Season",
    "Submission",
    "UploadGate",
    "Workspace",
    "accept_upload",
    "bot_spec",
    "check_upload_key",
    "digest",
    "digests_match",
    "is_disk_full",
    "load_competition",
    "make_private",
    "new_upload_key",
    "organizer_token",
    "run_finals",
    "run_ladder",
    "run_pipeline",
    "trim_logs",
]
