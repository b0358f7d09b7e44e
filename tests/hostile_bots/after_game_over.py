"""Plays like a random bot, and after every ``game_over`` writes an answer to the request
that the next game will open first (its id guessed): a message nobody asked for.

Usage: after_game_over.py
"""

from _common import Bot, write_raw
from taki_protocol import (
    Answer,
    BotHello,
    Decide,
    Error,
    GameOver,
    Hello,
    React,
    Shutdown,
    pack_message,
)

bot = Bot("after-game-over")
last_id = 0
for message in bot.messages():
    if isinstance(message, Hello):
        bot.send(BotHello(name=bot.name))
    elif isinstance(message, Decide | React):
        last_id = message.id
        bot.answer(message)
    elif isinstance(message, GameOver):
        write_raw(pack_message(Answer(id=last_id + 1, choice=0)))
    elif isinstance(message, Error | Shutdown):
        break
