"""A participant's bot that tries to read a file outside its folder and send its bytes
back through the check: at its first request it reads the file its command names (or,
with "@FILE", the path written in FILE, which its command does not name) and answers with the first
seven hex digits of it plus 1000 as its choice, which the check reports as an illegal
choice (``illegal: choice N``). When it cannot read the file it plays on like a random
bot, and says why on stderr.

Usage: leaker.py PATH | @FILE
"""

import sys

from _common import Bot, play
from taki_protocol import Request

ARG = sys.argv[1]
if ARG.startswith("@"):
    with open(ARG[1:]) as f:
        PATH = f.read().strip()
else:
    PATH = ARG


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests != 1:
        return False
    try:
        with open(PATH) as f:
            secret = f.read(7)
    except OSError as exc:
        print(f"leaker: cannot read {PATH}: {exc.strerror}", file=sys.stderr, flush=True)
        return False
    bot.answer(request, choice=int(secret, 16) + 1000)
    return True


play("leaker", hook)
