"""Plays like a random bot, but answers every react with a choice one past the end of
its legal list.

Usage: react_out_of_range.py
"""

from _common import Bot, play
from taki_protocol import React, Request


def hook(bot: Bot, request: Request) -> bool:
    if isinstance(request, React):
        bot.answer(request, choice=len(request.legal))
        return True
    return False


play("react-out-of-range", hook)
