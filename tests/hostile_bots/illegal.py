"""From request N on (default 1), answers with a choice one past the end of the legal
list.

Usage: illegal.py [N]
"""

from _common import Bot, arg, play
from taki_protocol import Request

N = arg(1, 1)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests >= N:
        bot.answer(request, choice=len(request.legal))
        return True
    return False


play("illegal", hook)
