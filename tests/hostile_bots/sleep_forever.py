"""Plays N requests (default 3), then sleeps forever without answering.

Usage: sleep_forever.py [N]
"""

import time

from _common import Bot, arg, play
from taki_protocol import Request

N = arg(1, 3)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests > N:
        while True:
            time.sleep(3600)
    return False


play("sleep-forever", hook)
