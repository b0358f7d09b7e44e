"""Takes deadline_ms 0 for "no limit": it then thinks for SECONDS (default 2) before
answering; any other request it answers at once.

Usage: zero_means_no_limit.py [SECONDS]
"""

import time

from _common import Bot, arg, play
from taki_protocol import Request


def hook(bot: Bot, request: Request) -> bool:
    if request.deadline_ms == 0:
        time.sleep(arg(1, 2))
    bot.answer(request)
    return True


play("zero-means-no-limit", hook)
