"""``taki-referee report``: the league's report pages from its results database."""

from __future__ import annotations

import argparse
import sys

from referee.core import UsageError
from referee.league import StoreError
from referee.present import load_report, render_linked_replays, write_report


def report_command(args: argparse.Namespace) -> int:
    """``taki-referee report DB [-o OUT] [--points N] [--title TEXT] [--replays]``."""
    if not args.db.exists():
        raise UsageError(f"no results database at {args.db}")
    if args.points < 1:
        raise UsageError("--points must be at least 1")
    try:
        data = load_report(args.db, args.points)
        if args.replays:  # the replays of the games the pages list
            written, problems = render_linked_replays(args.db, data.listed())
            for problem in problems:
                print(f"taki-referee: cannot render {problem}", file=sys.stderr)
            print(f"{written} replay pages written", file=sys.stderr)
        write_report(args.db, args.output, args.points, args.title, data)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}") from None
    print(args.output)
    return 0
