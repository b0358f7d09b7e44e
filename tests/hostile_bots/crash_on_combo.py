"""Plays like a random bot, but a request that offers a play_combo action (the old "+3
rule") makes it write a line to stderr and die of an uncaught exception, status 1.

Usage: crash_on_combo.py
"""

import sys

from _common import Bot, play
from taki_protocol import Request


def hook(bot: Bot, request: Request) -> bool:
    if any(action["kind"] == "play_combo" for action in request.legal):
        print(f"request {request.id}: a play_combo entry, which this bot does not know",
              file=sys.stderr, flush=True)
        raise KeyError("card")
    return False


play("crash-on-combo", hook)
