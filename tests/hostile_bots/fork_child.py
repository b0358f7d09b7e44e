"""Forks a child that keeps the bot's pipes open and sleeps; writes the child's pid to
PIDFILE; plays N requests (default 3), then exits ("exit") or sleeps forever ("hang").

Usage: fork_child.py exit|hang PIDFILE [N]
"""

import os
import sys
import time

from _common import Bot, arg, play
from taki_protocol import Request

MODE, PIDFILE = sys.argv[1], sys.argv[2]
N = arg(3, 3)

child = os.fork()
if child == 0:  # holds stdin, stdout and stderr open, and outlives its parent
    while True:
        time.sleep(3600)
with open(PIDFILE, "w") as f:
    f.write(str(child))


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests > N:
        if MODE == "exit":
            os._exit(0)
        while True:
            time.sleep(3600)
    return False


play("fork-child", hook)
