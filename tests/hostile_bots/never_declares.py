"""Plays like a random bot but never declares "last card".

Usage: never_declares.py
"""

from _common import Bot, play
from taki_protocol import Answer, Request


def hook(bot: Bot, request: Request) -> bool:
    choice = bot.rng.randrange(len(request.legal))
    bot.send(Answer(id=request.id, choice=choice, last_card=False))
    return True


play("never-declares", hook)
