"""Answers request N (default 1) twice: the second action is unsolicited.

Usage: extra_answer.py [N]
"""

from _common import Bot, arg, play, write_raw
from taki_protocol import Answer, Request, pack_message

N = arg(1, 1)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests == N:
        bot.answer(request)
        # Nobody asked for this one (the bot's own codec would refuse to send it).
        write_raw(pack_message(Answer(id=request.id, choice=0)))
        return True
    return False


play("extra-answer", hook)
