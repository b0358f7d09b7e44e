"""Answers request N (default 2), then at once also answers the request that will come
next (ids are consecutive, so its id is easy to guess) before that request was written:
an answer that could not have seen the position it answers. Both answers go out in one
write, so they reach the referee together: written one after the other, the second
could be held up until the next request had been written (a busy machine preempts the
bot between them), and would then pass for an answer to it.

Usage: answer_ahead.py [N]
"""

from _common import Bot, arg, play, write_raw
from taki_protocol import Answer, Request, pack_message

N = arg(1, 2)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests == N:
        answer = bot.codec.send(Answer(id=request.id, choice=0, last_card=True))
        # The bot's own codec would refuse to send it.
        write_raw(answer + pack_message(Answer(id=request.id + 1, choice=0)))
        return True
    return False


play("answer-ahead", hook)
