"""A mutant that budgets every request, a +3 Breaker reaction included, as a twentieth
of its bank (``time_left_ms``), and ``deadline_ms`` / 2 only when it has no bank. A
reaction's deadline is ``reaction_ms``, never the bank (PROTOCOL.md section 9): with a
60 s bank it thinks for 3 s about a break and times out. Without a bank it never errs.

Usage: mutant_bank_react.py
"""

import time

from _common import Bot, play
from taki_protocol import Request


def hook(bot: Bot, request: Request) -> bool:
    bank = request.time_left_ms
    budget_ms = bank / 20 if bank is not None else request.deadline_ms / 2
    if request.TYPE == "react":  # the bug: a decision's budget spent on a reaction
        time.sleep(min(budget_ms, 5000) / 1000)
    bot.answer(request)
    return True


play("mutant-bank-react", hook)
