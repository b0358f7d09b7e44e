"""``taki-referee report``: the league's report pages from its results database."""

from __future__ import annotations

import argparse
import sys

from referee.core import UsageError
from referee.league import ResultStore, StoreError
from referee.present import render_linked_replays, write_report


def report_command(args: argparse.Namespace) -> int:
    """``taki-referee report DB [-o OUT] [--points N] [--title TEXT] [--replays]``."""
    if not args.db.exists():
        raise UsageError(f"no results database at {args.db}")
    if args.points < 1:
        raise UsageError("--points must be at least 1")
    if args.replays:
        with ResultStore(args.db, readonly=True) as store:
            stored = list(store.games())
        written, problems = render_linked_replays(args.db, stored)
        for problem in problems:
            print(f"taki-referee: cannot render {problem}", file=sys.stderr)
        print(f"{written} replay pages written", file=sys.stderr)
    try:
        write_report(args.db, args.output, args.points, args.title)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}") from None
    print(args.output)
    return 0
