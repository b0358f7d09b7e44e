"""Answers request N (default 2) with a valid action padded, under a key the referee
ignores, to SIZE bytes (default 983,000): decoding it would cost the referee's loop
time that every other bot's clock shares.

Usage: padded_answer.py [N] [SIZE]
"""

import msgpack
from _common import Bot, arg, play, write_raw
from taki_protocol import Request

N = arg(1, 2)
SIZE = arg(2, 983_000)


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests == N:
        action = {"type": "action", "id": request.id, "choice": 0, "last_card": False}
        # Nils, one byte each, in arrays within the element limit: the most values for
        # the bytes, hence the slowest to decode.
        action["pad"] = [[None] * 60_000 for _ in range(SIZE // 60_000)]
        write_raw(msgpack.packb(action))
        return True
    return False


play("padded-answer", hook)
