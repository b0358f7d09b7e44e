"""The referee's fixed waits outside a bot's decisions, and how they scale.

A bot's goodbye (the ``error`` message, then its exit), its exit after ``shutdown``,
writing ``game_start`` and ``game_over`` and seeing a crashed bot's exit each have a
base wait, in milliseconds. A loaded machine slows everything, a bot's own exit
included, so every wait is the base times the run's *slack* (``check --slack``, 1 by
default) times the host's one-minute load per CPU when that is above 1: at load 50 on
two CPUs, the 500 ms a bot has to exit after ``shutdown`` become 12.5 s. A healthy bot
exits as soon as the machine lets it, so a longer wait costs nothing but the wait for a
bot that does not.
"""

from __future__ import annotations

from typing import Final

__all__ = ["EXIT_SEEN_MS", "GOODBYE_MS", "SEND_MS", "SHUTDOWN_WAIT_MS", "check_slack",
           "scaled_s"]

#: A forfeited bot's time, from the start of the ``error`` message, to read it and exit
#: by itself before it is killed (PROTOCOL.md, section 3.6).
GOODBYE_MS: Final = 200
#: A bot told to shut down has this long to exit by itself before it is killed.
SHUTDOWN_WAIT_MS: Final = 500
#: Writing ``game_start`` or ``game_over`` to a bot that does not read its input.
SEND_MS: Final = 1000
#: How long a bot that closed its output has to be seen exiting.
EXIT_SEEN_MS: Final = 500


def check_slack(slack: float) -> float:
    """``slack`` if it is a valid slack (a finite number of at least 1), else ValueError."""
    if isinstance(slack, bool) or not isinstance(slack, int | float) or not 1 <= slack < 1e6:
        raise ValueError(f"the slack must be a number from 1 up, got {slack!r}")
    return float(slack)


def scaled_s(base_ms: int, slack: float = 1.0, load_per_cpu: float | None = None) -> float:
    """A wait of ``base_ms`` in seconds, times ``slack`` and the load per CPU above 1."""
    load = 1.0 if load_per_cpu is None else max(1.0, load_per_cpu)
    return base_ms / 1000 * slack * load
