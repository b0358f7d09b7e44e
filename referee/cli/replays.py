"""``taki-referee replay verify``: re-play replays and check their results."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from referee.core import replay


def verify_command(args: argparse.Namespace) -> int:
    out = Console(soft_wrap=True)
    failures = 0
    for path in args.files:
        # Each file on its own: whatever one holds, the next ones are still checked.
        try:
            result = replay.verify(replay.Replay.load(path))
        except replay.ReplayError as exc:
            problem = str(exc)
        except Exception as exc:  # a replay that the checks of Replay.load let through
            problem = f"unexpected {type(exc).__name__}: {exc}"
        else:
            winner = "no winner" if result.winner is None else f"seat {result.winner} wins"
            out.print(f"[green]ok[/]   {escape(str(path))}: {winner} after {result.actions}"
                      " actions", highlight=False)
            continue
        failures += 1
        out.print(f"[red]FAIL[/] {escape(str(path))}: {escape(problem)}", highlight=False)
    return 1 if failures else 0
