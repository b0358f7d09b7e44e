"""Plumbing shared by the hostile test bots: a blocking protocol loop with one hook.

Each bot in this directory plays like a random bot until its hook decides to misbehave.
Run them as ``python tests/hostile_bots/NAME.py [ARGS]``; this directory is then the
first entry of ``sys.path``, so ``import _common`` works.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable, Iterator

from taki_protocol import (
    EOF,
    NEED_DATA,
    Answer,
    BotHello,
    Codec,
    Decide,
    Error,
    Hello,
    Message,
    React,
    Request,
    Shutdown,
)

#: ``hook(bot, request)``: misbehave (and return True: the request is handled), or
#: return False to let the bot answer normally.
Hook = Callable[["Bot", Request], bool]


def write_raw(data: bytes, fd: int = 1) -> None:
    """Write all of ``data`` to a descriptor, unbuffered."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def arg(index: int, default: int) -> int:
    """Integer command-line argument ``index`` (1-based), or ``default``."""
    return int(sys.argv[index]) if len(sys.argv) > index else default


class Bot:
    """The bot's side of one connection, with a count of the requests answered."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.codec = Codec("bot")
        self.requests = 0  # requests received so far, the current one included
        self.rng = random.Random(0)

    def send(self, message: Message) -> None:
        write_raw(self.codec.send(message))

    def messages(self) -> Iterator[Message]:
        while True:
            message = self.codec.next_message()
            if message is NEED_DATA:
                self.codec.receive_data(os.read(0, 65536))
                continue
            if message is EOF:
                return
            assert not isinstance(message, type(EOF))
            yield message

    def answer(self, request: Decide | React, choice: int | None = None) -> None:
        if choice is None:
            choice = self.rng.randrange(len(request.legal))
        self.send(Answer(id=request.id, choice=choice, last_card=True))


def play(name: str, hook: Hook | None = None) -> None:
    """Answer hello, then every request (random choices) unless ``hook`` handles it."""
    bot = Bot(name)
    for message in bot.messages():
        if isinstance(message, Hello):
            bot.send(BotHello(name=name))
        elif isinstance(message, Decide | React):
            bot.requests += 1
            if hook is None or not hook(bot, message):
                bot.answer(message)
        elif isinstance(message, Error | Shutdown):
            return
