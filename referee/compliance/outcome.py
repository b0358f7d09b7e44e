"""What a compliance run found: one outcome per scenario, one report per bot."""

from __future__ import annotations

from typing import Any

import attrs
from taki_protocol import Answer, Message

from referee.core import BotFault

__all__ = ["BotReport", "ScenarioOutcome"]


@attrs.frozen
class ScenarioOutcome:
    """A scenario passed, or failed with the ``problem`` found, the request the bot was
    sent then, its answer or the fault that forfeited it, the last lines it wrote to
    stderr by then and the file its stderr went to."""

    name: str
    group: str
    summary: str
    problem: str | None = None
    request: Message | None = None
    answer: Answer | None = None
    fault: BotFault | None = None
    stderr: str = ""
    log: str | None = None

    @property
    def passed(self) -> bool:
        return self.problem is None

    def what_the_bot_did(self) -> str:
        """The bot's answer or fault, in a few words ("" when there is neither)."""
        if self.fault is not None:
            return f"{self.fault.reason}: {self.fault.public_detail}"
        if self.answer is not None:
            return f"answered choice {self.answer.choice}, last_card {self.answer.last_card}"
        return ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "group": self.group,
            "summary": self.summary,
            "passed": self.passed,
            "problem": self.problem,
            "request": None if self.request is None else self.request.to_wire(),
            "answer": None if self.answer is None else self.answer.to_wire(),
            "fault": None if self.fault is None
            else {"reason": self.fault.reason, "detail": self.fault.public_detail},
            "stderr": self.stderr,
            "log": self.log,
        }


@attrs.frozen
class BotReport:
    """Every scenario's outcome for one bot, and how long the run took."""

    bot: str
    command: str
    outcomes: tuple[ScenarioOutcome, ...]
    seconds: float

    @property
    def passed(self) -> bool:
        return all(outcome.passed for outcome in self.outcomes)

    @property
    def failures(self) -> list[ScenarioOutcome]:
        return [outcome for outcome in self.outcomes if not outcome.passed]

    def to_json(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "command": self.command,
            "passed": self.passed,
            "scenarios": len(self.outcomes),
            "failed": len(self.failures),
            "seconds": round(self.seconds, 3),
            "outcomes": [outcome.to_json() for outcome in self.outcomes],
        }
