"""Plays N requests (default 3), then exits with status 2 on the next one.

Usage: exit_mid_game.py [N]
"""

import os
import sys

from _common import Bot, arg, play
from taki_protocol import Request

N = arg(1, 3)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests > N:
        sys.stderr.write("exit_mid_game: leaving\n")
        sys.stderr.flush()
        os._exit(2)
    return False


play("exit-mid-game", hook)
