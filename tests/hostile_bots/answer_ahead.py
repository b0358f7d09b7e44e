"""Answers request N (default 2), then at once also answers the request that will come
next (ids are consecutive, so its id is easy to guess) before that request was written:
an answer that could not have seen the position it answers.

Usage: answer_ahead.py [N]
"""

from _common import Bot, arg, play, write_raw
from taki_protocol import Answer, Request, pack_message

N = arg(1, 2)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests == N:
        bot.answer(request)
        # The bot's own codec would refuse to send it.
        write_raw(pack_message(Answer(id=request.id + 1, choice=0)))
        return True
    return False


play("answer-ahead", hook)
