"""Answers N requests (default 3), then writes "thinking..." to stderr and never answers.

Usage: stuck_thinking.py [N]
"""

import sys
import time

from _common import Bot, arg, play
from taki_protocol import Request

N = arg(1, 3)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests > N:
        print(f"request {request.id}: thinking...", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    return False


play("stuck-thinking", hook)
