"""A bot that slows the others of its game to win: from its first request on it keeps
COUNT busy children (default 3 per CPU), which it stops (SIGSTOP) while it is asked
anything and starts again (SIGCONT) once it has answered. It has the machine to itself
when it thinks, and its opponents think beside its busy loops. It plays random moves.

Usage: pondering_hog.py [COUNT]
"""

import os
import signal

from _common import Bot, arg, play
from taki_protocol import Request

COUNT = arg(1, 3 * (os.cpu_count() or 1))
children: list[int] = []


def hook(bot: Bot, request: Request) -> bool:
    if not children:
        for _ in range(COUNT):
            pid = os.fork()
            if pid == 0:
                while True:
                    pass
            children.append(pid)
    for pid in children:
        os.kill(pid, signal.SIGSTOP)
    bot.answer(request)
    for pid in children:
        os.kill(pid, signal.SIGCONT)
    return True


play("pondering-hog", hook)
