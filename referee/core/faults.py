"""Typed errors for bot misbehaviour and for bots that cannot be started.

A :class:`BotFault` is something a bot did wrong during a game: it was too
slow, it died, it spoke garbage, or it chose an action the rules forbid. The
referee turns a fault into a forfeit and records :attr:`BotFault.reason` as a
short, stable keyword, with :attr:`BotFault.detail` as the human-readable
explanation. Results, replays and logs keep the detail; the bots are told only
:attr:`BotFault.public_detail`, which leaves out what is nobody else's business (a
crashed bot's stderr, which may show the referee machine's paths).

:class:`BotStartError` is deliberately *not* a fault: a command that cannot be
started at all (missing executable, bad working directory, ...) is a mistake
in the configuration, not a move in the game, and should stop the run rather
than count as a loss.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from referee.core.errors import RefereeError, UserError

__all__ = [
    "BotCrashed",
    "BotFault",
    "BotIllegalAction",
    "BotProtocolError",
    "BotStartError",
    "BotTimeout",
    "FaultPolicy",
    "FaultReason",
]


class FaultPolicy(StrEnum):
    """What a bot's fault costs it (``fault_policy``)."""

    #: Any fault forfeits the game.
    FORFEIT = "forfeit"
    #: A timeout or an illegal answer plays a default action and counts a strike; the
    #: ``strikes``-th strike forfeits. A crash or a protocol error still forfeits.
    STRIKES = "strikes"


class FaultReason(StrEnum):
    """Why a bot forfeits (R23): the reasons of the wire (``taki_protocol.FORFEIT_REASONS``),
    of results and of the database, which keep the plain strings."""

    #: It did not answer within its time.
    TIMEOUT = "timeout"
    #: It exited, or closed or broke a pipe or its connection.
    CRASH = "crash"
    #: It broke the protocol.
    PROTOCOL = "protocol"
    #: It chose an action the rules forbid.
    ILLEGAL = "illegal"


class BotFault(RefereeError):
    """Base class of all faults a bot can commit during a game; each kind of fault is a
    subclass with its :attr:`reason`."""

    reason: ClassVar[FaultReason]
    """The kind of fault (stable; stored in results)."""

    detail: str
    """Human-readable explanation of what went wrong, in full (results, replays, logs)."""

    public_detail: str
    """What the bots are told: the ``message`` of the ``error`` sent to the bot and the
    ``detail`` of its forfeit in every bot's ``game_over``. The same as :attr:`detail`
    unless the fault was made with a shorter ``public`` text."""

    def __init__(self, detail: str, *, public: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.public_detail = detail if public is None else public

    def __str__(self) -> str:
        return self.detail

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.detail!r})"


class BotTimeout(BotFault):
    """The bot did not answer within its time allowance."""

    reason: ClassVar[FaultReason] = FaultReason.TIMEOUT


class BotCrashed(BotFault):
    """The bot exited, or closed or broke one of its pipes."""

    reason: ClassVar[FaultReason] = FaultReason.CRASH


class BotProtocolError(BotFault):
    """The bot sent bytes that are not a valid protocol message."""

    reason: ClassVar[FaultReason] = FaultReason.PROTOCOL


class BotIllegalAction(BotFault):
    """The bot sent a well-formed message naming an action the rules forbid."""

    reason: ClassVar[FaultReason] = FaultReason.ILLEGAL


class BotStartError(UserError):
    """A bot command could not be started at all (a configuration error).

    The message names the command, for example
    ``cannot start bot 'foo --fast': executable 'foo' not found``.
    """

    command: str
    """The command line, as it would be typed in a shell."""

    problem: str
    """What prevented the start."""

    def __init__(self, command: str, problem: str) -> None:
        super().__init__(f"cannot start bot {command!r}: {problem}")
        self.command = command
        self.problem = problem

    def __reduce__(self) -> tuple[type[BotStartError], tuple[str, str]]:
        return (type(self), (self.command, self.problem))


#: How much of a forfeit's detail a one-line summary shows.
SHORT_DETAIL = 80


def short_detail(detail: str) -> str:
    """The first line of a forfeit's detail, cut to :data:`SHORT_DETAIL` characters (a
    crash's detail holds the bot's last stderr lines), for one-line summaries."""
    lines = detail.strip().splitlines()
    first = lines[0] if lines else ""
    cut = len(lines) > 1 or len(first) > SHORT_DETAIL
    return first[:SHORT_DETAIL].rstrip() + ("\u2026" if cut else "")
