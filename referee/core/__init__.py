"""Pure values shared by every layer above the rules: the clock, the schedule, fault
types and the replay format. No I/O. May import referee.rules and taki_protocol."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .bounds import at_least, between
    from .clock import CPU_STARVED_CAP, MAX_MS, SeatClock, TimeBasis, TimeControl
    from .defaults import DEFAULT_JOIN_TIMEOUT_S, DEFAULT_TIME_BASIS
    from .errors import RefereeError, UsageError, UserError
    from .fairness import (
        STARVED_WAIT_CAP,
        Blame,
        InfraEvent,
        WaitFigures,
        charged_ms,
        extension_ms,
        judge,
        may_be_waiting,
        min_extension_ms,
    )
    from .faults import (
        BotCrashed,
        BotFault,
        BotIllegalAction,
        BotProtocolError,
        BotStartError,
        BotTimeout,
        FaultPolicy,
        FaultReason,
        short_detail,
    )
    from .files import FileWriteError, open_private, write_atomically
    from .groups import first_leaf, leaves, sole_cause
    from .margins import EXIT_SEEN_MS, GOODBYE_MS, SEND_MS, SHUTDOWN_WAIT_MS, check_slack, scaled_s
    from .outcomes import GameOutcome, MatchSettings, SeatForfeit, SeatOutcome
    from .replay import Replay, ReplayError, apply_entry, verify
    from .schedule import (
        DealRun,
        ScheduledGame,
        WorkUnit,
        block_games,
        derive_seed,
        fresh_seed,
        league_units,
        match_games,
        series_games,
        series_of,
        table_units,
        total_games,
        unit_bounds,
    )
    from .series import SeriesGame, SeriesResult, series_results
    from .specs import REMOTE, BotCommand, BotSpec, HardLimits, ResourceLimits, Sandbox
    from .time_use import TimeRecorder, TimeUse
    from .waiting import Look, Measure, Need, Verdict, WaitPolicy, WaitTimeout
else:
    __getattr__ = lazy_face(__name__, {
        "bounds": ("at_least", "between"),
        "clock": ("CPU_STARVED_CAP", "MAX_MS", "SeatClock", "TimeBasis", "TimeControl"),
        "waiting": ("Look", "Measure", "Need", "Verdict", "WaitPolicy", "WaitTimeout"),
        "defaults": ("DEFAULT_JOIN_TIMEOUT_S", "DEFAULT_TIME_BASIS"),
        "errors": ("RefereeError", "UsageError", "UserError"),
        "fairness": (
            "Blame", "InfraEvent", "STARVED_WAIT_CAP", "WaitFigures", "charged_ms",
            "extension_ms", "judge", "may_be_waiting", "min_extension_ms",
        ),
        "faults": (
            "BotCrashed", "BotFault", "BotIllegalAction", "BotProtocolError", "BotStartError",
            "BotTimeout", "FaultPolicy", "FaultReason", "short_detail",
        ),
        "files": ("FileWriteError", "open_private", "write_atomically"),
        "groups": ("first_leaf", "leaves", "sole_cause"),
        "margins": (
            "EXIT_SEEN_MS", "GOODBYE_MS", "SEND_MS", "SHUTDOWN_WAIT_MS", "check_slack", "scaled_s",
        ),
        "outcomes": ("GameOutcome", "MatchSettings", "SeatForfeit", "SeatOutcome"),
        "replay": ("Replay", "ReplayError", "apply_entry", "verify"),
        "schedule": (
            "DealRun", "ScheduledGame", "WorkUnit", "block_games", "derive_seed", "fresh_seed",
            "league_units", "match_games", "series_games", "series_of", "table_units",
            "total_games", "unit_bounds",
        ),
        "series": ("SeriesGame", "SeriesResult", "series_results"),
        "specs": ("BotCommand", "BotSpec", "HardLimits", "REMOTE", "ResourceLimits", "Sandbox"),
        "time_use": ("TimeRecorder", "TimeUse"),
    })

__all__ = [
    "CPU_STARVED_CAP",
    "DEFAULT_JOIN_TIMEOUT_S",
    "DEFAULT_TIME_BASIS",
    "EXIT_SEEN_MS",
    "GOODBYE_MS",
    "MAX_MS",
    "REMOTE",
    "SEND_MS",
    "SHUTDOWN_WAIT_MS",
    "STARVED_WAIT_CAP",
    "Blame",
    "BotCommand",
    "BotCrashed",
    "BotFault",
    "BotIllegalAction",
    "BotProtocolError",
    "BotSpec",
    "BotStartError",
    "BotTimeout",
    "DealRun",
    "FaultPolicy",
    "FaultReason",
    "FileWriteError",
    "GameOutcome",
    "HardLimits",
    "InfraEvent",
    "Look",
    "MatchSettings",
    "Measure",
    "Need",
    "RefereeError",
    "Replay",
    "ReplayError",
    "ResourceLimits",
    "Sandbox",
    "ScheduledGame",
    "SeatClock",
    "SeatForfeit",
    "SeatOutcome",
    "SeriesGame",
    "SeriesResult",
    "TimeBasis",
    "TimeControl",
    "TimeRecorder",
    "TimeUse",
    "UsageError",
    "UserError",
    "Verdict",
    "WaitFigures",
    "WaitPolicy",
    "WaitTimeout",
    "WorkUnit",
    "apply_entry",
    "at_least",
    "between",
    "block_games",
    "charged_ms",
    "check_slack",
    "derive_seed",
    "extension_ms",
    "first_leaf",
    "fresh_seed",
    "judge",
    "league_units",
    "leaves",
    "match_games",
    "may_be_waiting",
    "min_extension_ms",
    "open_private",
    "scaled_s",
    "series_games",
    "series_of",
    "series_results",
    "short_detail",
    "sole_cause",
    "table_units",
    "total_games",
    "unit_bounds",
    "verify",
    "write_atomically",
]
