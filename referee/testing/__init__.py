"""What the referee's tests, and those of programs built on it, play against (as
``trio.testing`` is for Trio): bots that live in memory, written in Python and run in the
referee's own Trio run, with the interface of a bot process. Used by tests only: no other
package imports it. May import referee.shell, referee.core and taki_protocol."""

from .memory import (
    PIPE_CAPACITY_BYTES,
    BotEnd,
    BotScript,
    MemoryOpener,
    MemoryTransport,
    memory_bot_pair,
    open_memory_bot,
)

__all__ = [
    "PIPE_CAPACITY_BYTES",
    "BotEnd",
    "BotScript",
    "MemoryOpener",
    "MemoryTransport",
    "memory_bot_pair",
    "open_memory_bot",
]
