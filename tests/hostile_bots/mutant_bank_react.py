"""A mutant that budgets every request, a +3 Breaker reaction included, as a twentieth
of its bank (``time_left_ms``), and answers at once when it has no bank. A
reaction's deadline is ``reaction_ms``, never the bank (PROTOCOL.md section 9): with a
60 s bank it thinks (spends CPU time) for 3 s about a break and times out, on
the wall-time basis and on the CPU basis alike. Without a bank it never errs.

Usage: mutant_bank_react.py
"""

import time

from _common import Bot, play
from taki_protocol import Request


def search(budget_ms: float) -> None:
    """Think (spend CPU time) for ``budget_ms``, as a search does."""
    end = time.process_time() + budget_ms / 1000
    while time.process_time() < end:
        pass


def hook(bot: Bot, request: Request) -> bool:
    bank = request.time_left_ms
    budget_ms = bank / 20 if bank is not None else 0.0
    if request.TYPE == "react":  # the bug: a decision's budget spent on a reaction
        search(min(budget_ms, 5000))
    bot.answer(request)
    return True


play("mutant-bank-react", hook)
