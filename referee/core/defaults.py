"""Defaults that the command line shows in its help and the layers below apply.

Standard library only: the command line's parser reads them without loading the
layers they belong to (``referee.cli.parser``)."""

from __future__ import annotations

from typing import Final

DEFAULT_JOIN_TIMEOUT_S: Final = 60.0
"""How long the games wait for a remote bot that is not connected, once per absence
(see :meth:`referee.shell.remote.RemoteSeats.take`)."""

DEFAULT_TIME_BASIS: Final = "cpu"
"""What a bot's time is measured in unless a run says otherwise: the CPU time of its
processes (``referee.core.clock.TimeBasis``), which a crowded machine, or another bot
of the game, does not inflate. A bot whose CPU time cannot be read (a remote bot) is
measured in wall time. PROTOCOL.md, section 9, says why."""
