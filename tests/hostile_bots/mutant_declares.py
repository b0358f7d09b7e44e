"""A mutant that plays like a random bot and declares "last card" with every action,
except in the one case its author got wrong, FIGURE:

- ``stop`` or ``change_direction``: a card of that figure that leaves one card in a
  two-player game, believing its player plays again before the turn ends (D16, R9);
- ``king``: a King as the last card, believing the free action follows (in the Pyramid
  the turn ends there, with the next stage's card: R24, D6).

``taki-referee check`` must fail it (tests/compliance/test_mutants.py).

Usage: mutant_declares.py FIGURE
"""

import sys

from _common import Bot, play
from taki_protocol import Answer, Request

FIGURE = sys.argv[1]


def wrong_here(request: Request, choice: int) -> bool:
    action, view = request.legal[choice], request.view
    card = action.get("card", "")
    if action["kind"] != "play" or not card.endswith(FIGURE):
        return False
    left = len(view["hand"]) - 1
    if FIGURE == "king":
        return left == 0
    return left == 1 and sum(view["active"]) == 2


def hook(bot: Bot, request: Request) -> bool:
    choice = bot.rng.randrange(len(request.legal))
    bot.send(Answer(id=request.id, choice=choice, last_card=not wrong_here(request, choice)))
    return True


play(f"mutant-declares-{FIGURE}", hook)
