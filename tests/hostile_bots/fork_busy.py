"""A losing bot that tries to buy a void: at its first request it forks COUNT busy loops
(default 4 per CPU) to overload the machine, and never answers.

Usage: fork_busy.py [COUNT]
"""

import os
import time

from _common import Bot, arg, play
from taki_protocol import Request

COUNT = arg(1, 4 * (os.cpu_count() or 1))


def hook(bot: Bot, request: Request) -> bool:
    for _ in range(COUNT):
        if os.fork() == 0:
            while True:
                pass
    while True:
        time.sleep(3600)


play("fork-busy", hook)
