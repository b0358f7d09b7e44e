"""A mutant that takes request ids for a counter: it exits with status 1 when an id is
not one more than the previous one (PROTOCOL.md section 3.2: ids increase, and need not
be consecutive).

Usage: mutant_consecutive_ids.py
"""

import sys

from _common import Bot, play
from taki_protocol import Request

last: list[int] = []


def hook(bot: Bot, request: Request) -> bool:
    if last and request.id != last[-1] + 1:
        print(f"expected request {last[-1] + 1}, got {request.id}", file=sys.stderr)
        sys.exit(1)
    last.append(request.id)
    return False


play("mutant-consecutive-ids", hook)
