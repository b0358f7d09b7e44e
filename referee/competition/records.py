"""What the competition keeps about participants and their submissions, as plain values."""

from __future__ import annotations

import enum
from typing import Any

import attrs

from referee.config import VERSION_MARK

__all__ = ["Participant", "Status", "Step", "Submission"]


class Status(enum.StrEnum):
    """Where a submission stands. ``queued``, ``building`` and ``checking`` are on their
    way; ``active`` plays in the ladder; ``rejected`` failed a step; ``retired`` played
    and was replaced by a newer bot of its participant (its games stay)."""

    QUEUED = "queued"
    BUILDING = "building"
    CHECKING = "checking"
    ACTIVE = "active"
    REJECTED = "rejected"
    RETIRED = "retired"

    @property
    def pending(self) -> bool:
        return self in (Status.QUEUED, Status.BUILDING, Status.CHECKING)

    @property
    def final(self) -> bool:
        return not self.pending


class Step(enum.StrEnum):
    """The step of the pipeline that rejected a submission."""

    BUILD = "build"
    CHECK = "check"
    #: The server stopped during the step too often (kill -9 each time).
    INTERRUPTED = "interrupted"


def _step(value: str | None) -> Step | None:
    return None if value is None else Step(value)


@attrs.frozen
class Participant:
    name: str
    disabled: bool
    created_at: str


@attrs.frozen
class Submission:
    id: int
    participant: str
    #: The bot's name from its manifest (``bot.toml``).
    bot: str
    command: str
    build: str | None
    status: Status = attrs.field(converter=Status)
    #: Its number among the bot's versions that passed (``name@N``), once it passed.
    version: int | None
    #: Why it was rejected: the step and that step's output.
    step: Step | None = attrs.field(converter=_step)
    output: str
    #: The folder (under the competition's files) that holds it.
    folder: str
    received_at: str
    #: How many times its build and check were started (a restart after kill -9).
    attempts: int = 0

    @property
    def entrant(self) -> str | None:
        """The name it plays under (``greedy@2``), once it passed."""
        return None if self.version is None else f"{self.bot}{VERSION_MARK}{self.version}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "participant": self.participant, "bot": self.bot,
            "status": str(self.status), "entrant": self.entrant,
            "step": None if self.step is None else str(self.step), "output": self.output,
            "received_at": self.received_at,
        }
