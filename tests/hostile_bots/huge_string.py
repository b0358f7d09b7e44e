"""Plays N requests (default 3), then starts a message whose header announces a 2 GiB
string, and never sends the rest.

Usage: huge_string.py [N]
"""

import time

from _common import Bot, arg, play, write_raw
from taki_protocol import Request

N = arg(1, 3)

# A map of one entry: the key "type", then a str 32 header of length 2**31.
HEADER = b"\x81\xa4type\xdb" + (2**31).to_bytes(4, "big")


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests > N:
        write_raw(HEADER)
        time.sleep(3600)
    return False


play("huge-string", hook)
