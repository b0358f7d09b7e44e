"""The bot check: before a run plays any game, every local bot must start.

Each distinct local bot is started once with its real command, working directory,
environment and limits, must complete the protocol handshake (``hello``, then its
``bot_hello``) within the startup time, and is then told to shut down and stopped, all
with the machinery of a game (:func:`~referee.shell.process.open_bot_process` and
:class:`~referee.shell.bots.BotConnection`), so nothing it forked outlives the check. The bots
are checked concurrently.

A bot that fails is a mistake in the set-up (a typo in a script's name, a path relative
to the wrong directory, a missing interpreter), not a loss: ``league``, ``sprt`` and
``match`` stop before their first game with one :class:`BotCheckError` per failing bot,
unless they are told to let broken bots forfeit (``--no-bot-check``). A Dask worker runs
the same check before it plays a bot for the first time in a league run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import attrs
import trio

from referee.config import available_cpus
from referee.core import (
    EXIT_SEEN_MS,
    BotCommand,
    BotFault,
    BotProtocolError,
    BotSpec,
    BotStartError,
    BotTimeout,
    TimeControl,
)
from referee.shell import BotConnection, open_bot_process

__all__ = ["BotCheckError", "BotCheckFailure", "check_bot", "check_bots", "require_bots"]

#: Lines of a failing bot's stderr shown in its error.
STDERR_LINES = 5


@attrs.frozen
class BotCheckFailure:
    """A bot that did not pass the check, and why."""

    bot: str
    #: The command as it would be typed in a shell.
    command: str
    #: e.g. ``exited with status 2 before its handshake``.
    problem: str
    #: Where the bot was given (``league.toml:14``, ``OLD``), when known.
    origin: str | None = None
    #: The bot's working directory (None: the referee's).
    cwd: str | None = None
    #: The last lines of its stderr ("" when it wrote none).
    stderr: str = ""

    def describe(self) -> str:
        where = f"{self.origin}: " if self.origin else ""
        lines = [
            f"{where}bot {self.bot!r} failed the bot check: {self.problem}",
            f"  command: {self.command}",
            f"  working directory: {self.cwd if self.cwd is not None else os.getcwd()}",
        ]
        if self.stderr:
            lines.append("  last lines of its stderr:")
            lines += [f"    {line}" for line in self.stderr.splitlines()]
        hint = self.hint()
        if hint:
            lines.append(f"  hint: {hint}")
        return "\n".join(lines)

    def hint(self) -> str:
        """What usually causes this failure, when its signs are clear."""
        if "No module named 'taki_protocol'" in self.stderr:
            return (
                "the Python that runs the bot (its #! line's, if it is started as a"
                " program) cannot import the SDK: start it with python (\"python bot.py\""
                " runs it with the referee's Python, which has taki_protocol), or make"
                " taki_protocol importable there (pip install the referee's folder into it,"
                " or set PYTHONPATH to its protocol/ folder)"
            )
        return ""


class BotCheckError(BotStartError):
    """A bot failed the bot check: a configuration error that stops the run (exit
    status 2 on the command line). The message says everything the failure holds."""

    failure: BotCheckFailure

    def __init__(self, failure: BotCheckFailure) -> None:
        super().__init__(failure.command, failure.problem)
        self.args = (failure.describe(),)
        self.failure = failure

    def __reduce__(self) -> tuple[type[BotCheckError], tuple[BotCheckFailure]]:  # type: ignore[override]
        return (type(self), (self.failure,))


def _problem(fault: BotFault, conn: BotConnection, startup_ms: int) -> str:
    if isinstance(fault, BotTimeout):  # the handshake's only deadline
        return f"no handshake within {startup_ms} ms"
    if isinstance(fault, BotProtocolError):
        return f"protocol error in its handshake: {fault.detail}"
    if conn.process.returncode is not None:
        return f"{conn.process.status()} before its handshake"
    return "closed its output before its handshake"


async def check_bot(spec: BotSpec, time: TimeControl) -> BotCheckFailure | None:
    """Start a local bot, complete the handshake within the startup time of ``time``
    (with its grace, as in a game) and shut it down; None when all went well, else what
    went wrong."""
    command = spec.local_command()

    def failure(problem: str, stderr: str = "") -> BotCheckFailure:
        return BotCheckFailure(spec.name, command.display, problem, spec.origin,
                               command.cwd, stderr)

    try:
        async with open_bot_process(command) as process:
            conn = BotConnection(spec.name, process)
            try:
                await conn.handshake(time.startup_ms, time.grace_ms)
            except BotFault as fault:
                if not isinstance(fault, BotTimeout):
                    # Seen exiting, so that its status and last stderr lines are reported.
                    with trio.move_on_after(conn.wait_s(EXIT_SEEN_MS)):
                        await process.wait()
                return failure(_problem(fault, conn, time.startup_ms),
                               process.stderr_tail(STDERR_LINES))
            await conn.shutdown()
    except BotStartError as exc:
        return failure(exc.problem)
    return None


async def check_bots(
    bots: Sequence[BotSpec], time: TimeControl, *, limit: int | None = None
) -> list[BotCheckFailure]:
    """Check every distinct local bot of ``bots`` (remote seats are skipped: they join
    later), at most ``limit`` at a time (default: twice the CPUs, at least 4). Returns
    the failures in the order of ``bots``; a command shared by several bots is started
    once and fails for each of them."""
    local = [b for b in bots if not b.remote]
    distinct: dict[BotCommand, BotSpec] = {}
    for bot in local:
        distinct.setdefault(bot.local_command(), bot)
    results: dict[BotCommand, BotCheckFailure | None] = {}
    slots = trio.CapacityLimiter(limit or max(4, 2 * available_cpus()))

    async def check(key: BotCommand, bot: BotSpec) -> None:
        async with slots:
            results[key] = await check_bot(bot, time)

    async with trio.open_nursery() as nursery:
        for key, bot in distinct.items():
            nursery.start_soon(check, key, bot)
    failures = []
    for bot in local:
        found = results[bot.local_command()]
        if found is not None:
            failures.append(attrs.evolve(found, bot=bot.name, origin=bot.origin))
    return failures


async def require_bots(bots: Sequence[BotSpec], time: TimeControl, *, limit: int) -> None:
    """Check the bots, at most ``limit`` at a time (what the run itself would start at
    once, so that the check never asks more of the machine than the run); raise an
    exception group of one :class:`BotCheckError` per failing bot (the command line
    prints each, and exits with status 2)."""
    failures = await check_bots(bots, time, limit=limit)
    if failures:
        raise ExceptionGroup(
            f"{len(failures)} bot(s) failed the bot check",
            [BotCheckError(f) for f in failures],
        )
