"""The root of the referee's errors.

Every error the referee raises on purpose is a :class:`RefereeError`. Two branches:

* :class:`UserError`: something the user or the host must fix (a bad league file or
  argument, a bot that cannot start, a database in use or full, a missing ``bwrap``). The
  command line reports it in one line and exits with status 2, in one place
  (``referee.cli.main``).
* :class:`~referee.core.faults.BotFault`: something a bot did wrong in a game; it
  becomes a typed forfeit, never an error of the run.

The pure rules core (``referee.rules.RulesError``) and the protocol package
(``taki_protocol.ProtocolError``) keep roots of their own: they stand alone, below
everything else, and import nothing of the referee.
"""

from __future__ import annotations

__all__ = ["RefereeError", "UsageError", "UserError"]


class RefereeError(Exception):
    """Base class of the errors the referee raises on purpose."""


class UserError(RefereeError):
    """A mistake of the user's or a problem of the host's: one line, exit status 2."""


class UsageError(UserError):
    """Bad command-line arguments (or a combination of them)."""
