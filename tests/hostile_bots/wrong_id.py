"""Answers request N (default 3) with the wrong request id.

Usage: wrong_id.py [N]
"""

from _common import Bot, arg, play, write_raw
from taki_protocol import Answer, Request, pack_message

N = arg(1, 3)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests == N:
        # Bypass the bot's own codec, which would refuse to send this.
        write_raw(pack_message(Answer(id=request.id + 1000, choice=0)))
        return True
    return False


play("wrong-id", hook)
