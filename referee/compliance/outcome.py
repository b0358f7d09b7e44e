"""What a compliance run found: one outcome per scenario, one report per bot."""

from __future__ import annotations

from typing import Any

import attrs
from taki_protocol import Answer, Message

from referee.core import BotFault

__all__ = ["BotReport", "ScenarioOutcome", "failure_summary"]


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


#: The start of the problem of a scenario that could not be played at all.
NOT_PLAYED = "not played: "


def failure_summary(report: BotReport, max_lines: int = 40) -> list[str]:
    """A failed report in a few lines, for someone who cannot run it again (a competition
    server's participant): each scenario that failed and what the bot did (at most
    ``max_lines`` of them), the scenarios not played for one reason folded into one line,
    and then the last lines the bot wrote to stderr in the first failure that has any (a
    traceback, usually)."""
    lines: list[str] = []
    not_played: dict[str, int] = {}
    for outcome in report.failures:
        problem = outcome.problem or ""
        if problem.startswith(NOT_PLAYED):
            not_played[problem] = not_played.get(problem, 0) + 1
            continue
        lines.append(f"FAIL {outcome.name}: {problem}")
        did = outcome.what_the_bot_did()
        if did:
            lines.append(f"     the bot: {did}")
    for problem, count in not_played.items():
        lines.append(f"{count} scenario{'s' * (count != 1)} {problem}")
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"... and {len(lines) - max_lines} more lines"]
    stderr = next((o for o in report.failures if o.stderr.strip()), None)
    if stderr is None:
        lines.append("the bot wrote nothing to stderr")
    else:
        lines.append(f"the bot's last lines on stderr (in {stderr.name}):")
        lines += [f"  | {line}" for line in stderr.stderr.splitlines()]
    return lines
