"""taki-referee check: scripted scenarios that put a bot through every situation of the
protocol, played by the match runner's own referee. May import referee.match,
referee.shell, referee.core and referee.rules."""

from .outcome import BotReport, ScenarioOutcome, failure_summary
from .run import CheckSettings, check_bot, scenario_catalogue

__all__ = [
    "BotReport",
    "CheckSettings",
    "ScenarioOutcome",
    "check_bot",
    "failure_summary",
    "scenario_catalogue",
]
