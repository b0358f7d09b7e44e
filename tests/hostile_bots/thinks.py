"""Plays like a random bot, but thinks (sleeps) SECONDS before each of its decisions
number FROM to FROM + TIMES - 1 of a process (all of them with TIMES 0), saying so on
stderr first. With SEAT, it thinks only in games where it has that seat (elsewhere it
plays at once). Any further words are ignored (tests use one to find the processes of
a run).

Usage: thinks.py SECONDS FROM TIMES [SEAT|any] [WORD...]
"""

import sys
import time

from _common import Bot, play
from taki_protocol import Decide, Request

SECONDS = float(sys.argv[1])
FIRST, TIMES = int(sys.argv[2]), int(sys.argv[3])
SEAT = None if len(sys.argv) < 5 or sys.argv[4] == "any" else int(sys.argv[4])
decisions = 0


def hook(bot: Bot, request: Request) -> bool:
    global decisions
    if not isinstance(request, Decide):
        return False
    if SEAT is not None and request.view.get("seat") != SEAT:
        return False
    decisions += 1
    if decisions >= FIRST and (TIMES == 0 or decisions < FIRST + TIMES):
        print(f"thinks: {SECONDS:g} s on decision {decisions}", file=sys.stderr, flush=True)
        time.sleep(SECONDS)
    return False


play("thinks", hook)
