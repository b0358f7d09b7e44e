"""A bot that spends a fixed share of each request's time limit on the CPU, then plays
the first legal action: ``python cpu_share_bot.py SHARE`` (0.5: half its limit).

It measures its own CPU time (``time.process_time``), so a crowded machine stretches
its answers in wall time but not in CPU time. ``benchmarks/overload.py`` plays it.
"""

import sys
import time
from typing import Any

from taki_protocol import run_bot

SHARE = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
limit_ms = [0]


def note(request: dict[str, Any]) -> None:
    limit_ms[0] = int(request.get("deadline_ms") or 0)


def choose(view: dict[str, Any], legal: list[dict[str, Any]]) -> tuple[int, bool]:
    until = time.process_time() + SHARE * limit_ms[0] / 1000
    spins = 0
    while time.process_time() < until:
        spins += 1
    return 0, True


if __name__ == "__main__":
    run_bot(choose, name=f"cpu-share-{SHARE}", on_request=note)
