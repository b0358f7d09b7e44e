"""``taki-referee replay verify`` (re-play replays and check their results) and
``taki-referee replay render`` (a page per replay)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from referee.core import Replay, ReplayError, UsageError, verify
from referee.present import page_targets, render_replay


def verify_command(args: argparse.Namespace) -> int:
    out = Console(soft_wrap=True)
    failures = 0
    for path in args.files:
        # Each file on its own: whatever one holds, the next ones are still checked.
        try:
            result = verify(Replay.load(path))
        except ReplayError as exc:
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


def render_command(args: argparse.Namespace) -> int:
    """``taki-referee replay render FILE... [-o OUT]``: every page in one process. A
    replay that cannot be rendered is reported and the others are still rendered; exit
    status 2 when one could not be."""
    files: list[Path] = args.files
    targets = page_targets(files, args.output)
    names = [t.name for t in targets]
    if len(set(names)) < len(names) and args.output is not None and len(files) > 1:
        raise UsageError("replays of the same file name would share a page in "
                         f"{args.output}: render them into separate folders")
    if len(files) > 1 and args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)
    failed = []
    for source, target in zip(files, targets, strict=True):
        try:
            render_replay(source, target)
        except ReplayError as exc:
            failed.append(f"{source}: {exc}")
        except OSError as exc:
            failed.append(f"cannot write {target}: {exc.strerror or exc}")
        except Exception as exc:  # a replay that the checks of Replay.load let through
            failed.append(f"{source}: unexpected {type(exc).__name__}: {exc}")
        else:
            print(target)
    if failed:
        if len(failed) == 1 and len(files) == 1:
            raise UsageError(failed[0])
        for problem in failed:
            print(f"taki-referee: {problem}", file=sys.stderr)
        raise UsageError(f"{len(failed)} of {len(files)} replays could not be rendered")
    return 0
