"""Plays like a random bot and appends every ``game_over`` it receives, as one line of
JSON, to FILE: what a bot learns of the other seats' forfeits.

Usage: record_game_over.py FILE
"""

import json
import sys

from _common import Bot
from taki_protocol import BotHello, Decide, Error, GameOver, Hello, React, Shutdown

bot = Bot("record-game-over")
with open(sys.argv[1], "a", encoding="utf-8") as out:
    for message in bot.messages():
        if isinstance(message, Hello):
            bot.send(BotHello(name=bot.name))
        elif isinstance(message, Decide | React):
            bot.answer(message)
        elif isinstance(message, GameOver):
            out.write(json.dumps(message.to_wire()) + "\n")
            out.flush()
        elif isinstance(message, Error | Shutdown):
            break
