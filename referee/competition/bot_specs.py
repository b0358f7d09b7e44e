"""How the ladder, the check and the finals start a submission's bot: in its folder, in
the sandbox, with the competition's limits."""

from __future__ import annotations

import attrs

from referee.competition.config import CompetitionConfig
from referee.competition.records import Submission
from referee.competition.workspace import Workspace
from referee.config import make_command
from referee.core import BotSpec, ResourceLimits, Sandbox

__all__ = ["bot_spec"]


def bot_spec(submission: Submission, name: str, config: CompetitionConfig,
             workspace: Workspace, *, niceness: int | None = None) -> BotSpec:
    """How the ladder (and the check, ``niceness`` levels lower) start a submission's
    bot: in its folder, in the sandbox, with the competition's limits."""
    box = config.sandbox
    limits = ResourceLimits(memory_mb=box.memory_mb, pids=box.pids,
                            cpu_percent=box.cpu_percent or None, niceness=niceness)
    command = make_command(submission.command, cwd=str(workspace.bot_dir(submission)),
                           limits=limits)
    return BotSpec(name, attrs.evolve(command, sandbox=Sandbox(tmp_mb=box.tmp_mb)),
                   origin=f"submission {submission.id}")
