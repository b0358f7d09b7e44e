"""Plays N requests (default 3), then writes bytes that are not msgpack and waits.

Usage: garbage.py [N]
"""

import time

from _common import Bot, arg, play, write_raw
from taki_protocol import Request

N = arg(1, 3)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests > N:
        write_raw(b"this is not msgpack\n")
        time.sleep(3600)
    return False


play("garbage", hook)
