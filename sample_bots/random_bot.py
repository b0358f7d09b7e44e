"""A bot that plays a uniformly random legal action.

Usage: python sample_bots/random_bot.py [SEED]
"""

import random
import sys
from typing import Any

from taki_protocol import run_bot

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else None)


def choose(view: dict[str, Any], legal: list[dict[str, Any]]) -> tuple[int, bool]:
    # Always declare "last card": a declaration that turns out untrue costs nothing.
    return rng.randrange(len(legal)), True


if __name__ == "__main__":
    run_bot(choose, name="random-bot")
