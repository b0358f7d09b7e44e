"""Values shared by every layer above the rules: the clock, the schedule, fault types
and the replay format. Pure (no clock, no trio, no database) but for blocking file I/O in
two places: the one atomic file write (files.py) and a replay's saving and loading
(replay.py). May import referee.rules and taki_protocol."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .bounds import at_least, between
    from .clock import CPU_STARVED_CAP, CPU_WALL_CAP, MAX_MS, SeatClock, TimeBasis, TimeControl
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
        kept_off_ms,
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
    from .time_use import TimeRecorder, TimeSummary, TimeUse
    from .waiting import Look, Measure, Need, Verdict, WaitPolicy, WaitTimeout
else:
    __getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
