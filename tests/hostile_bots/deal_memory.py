"""Plays like a random bot and appends ``PROCESS GAME_ID`` to FILE at every
``game_start``: which process played which games (PROCESS: its pid and a random tag,
since contained bots, each in a pid namespace of its own, may all have one pid). A
process that played two games of one deal would know, in the second, the other hands and
the draw order from the first.

Usage: deal_memory.py FILE
"""

import os
import secrets
import sys

from _common import Bot
from taki_protocol import BotHello, Decide, Error, GameStart, Hello, React, Shutdown

PROCESS = f"{os.getpid()}.{secrets.token_hex(8)}"
bot = Bot("deal-memory")
with open(sys.argv[1], "a", encoding="utf-8") as out:
    for message in bot.messages():
        if isinstance(message, Hello):
            bot.send(BotHello(name=bot.name))
        elif isinstance(message, GameStart):
            out.write(f"{PROCESS} {message.game_id}\n")
            out.flush()
        elif isinstance(message, Decide | React):
            bot.answer(message)
        elif isinstance(message, Error | Shutdown):
            break
