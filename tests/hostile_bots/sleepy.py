"""Plays normally but sleeps DELAY_MS (default 150) before every answer.

Usage: sleepy.py [DELAY_MS]
"""

import time

from _common import Bot, arg, play
from taki_protocol import Request

DELAY_S = arg(1, 150) / 1000


def hook(bot: Bot, request: Request) -> bool:
    time.sleep(DELAY_S)
    return False


play("sleepy", hook)
