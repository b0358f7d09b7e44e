"""Declares "last card" only when it works out that it needs to, the naive way: a play
from two cards, a break from two cards, or a Crazy Card when the seat just before it
(by number, forfeited or not) holds one card. It misses the Pyramid and the forfeited
seat that a Crazy Card skips.

Usage: naive_declarer.py
"""

from _common import Bot, play
from taki_protocol import Answer, Request


def needs_declaring(view: dict, action: dict) -> bool:
    hand = view["hand"]
    if action["kind"] in ("play", "break") and len(hand) == 2:
        return True
    if action.get("card") == "crazy":
        before = (view["seat"] - view["direction"]) % view["players"]
        return bool(view["hand_sizes"][before] == 1)
    return False


def hook(bot: Bot, request: Request) -> bool:
    legal = request.legal
    # Breaks whenever it can, else plays the first card offered.
    kinds = [a["kind"] for a in legal]
    choice = kinds.index("break") if "break" in kinds else 0
    declare = needs_declaring(request.view, legal[choice])
    bot.send(Answer(id=request.id, choice=choice, last_card=declare))
    return True


play("naive-declarer", hook)
