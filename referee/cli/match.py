"""``taki-referee match``: play games between bots given on the command line."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from referee.cli.remote import remote_seats
from referee.cli.sandboxing import sandboxed_bots
from referee.config.settings import directory_error, parse_bot_arg, unique_names
from referee.core.clock import TimeControl
from referee.core.errors import UsageError
from referee.core.schedule import fresh_seed, match_games
from referee.core.specs import BotSpec
from referee.league.botcheck import require_bots
from referee.match.game import GameOutcome, MatchSettings
from referee.match.unit import play_unit
from referee.rules import Rules
from referee.rules.config import DealError


def master_seed(args: argparse.Namespace) -> int:
    """``--seed``, or a fresh master seed; either way it goes to standard error (``match
    --seed S`` repeats the deals) before any game."""
    seed = fresh_seed() if args.seed is None else args.seed
    print(f"master seed {seed} (--seed {seed} repeats these deals)", file=sys.stderr)
    return seed


def require_directories(*options: tuple[str, Path | None]) -> None:
    """UsageError for the first ``(option, path)`` whose path cannot be a directory (a
    file in its place), before anything is played."""
    for option, path in options:
        problem = None if path is None else directory_error(path)
        if problem is not None:
            raise UsageError(f"{option} {path}: {problem}")


def require_deal(rules: Rules, players: int) -> None:
    """UsageError when ``--flag hand_size`` is too large to deal ``players`` hands."""
    try:
        rules.check_deal(players)
    except DealError as exc:
        raise UsageError(f"--flag hand_size={rules.hand_size}: {exc}") from None


def finite_json(value: Any) -> Any:
    """``value`` with every infinite or NaN float replaced by None, so that it prints as
    strict JSON (``null``; never ``Infinity``, which JSON parsers refuse)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value


def print_json(value: Any) -> None:
    """Print ``value`` as one line of strict JSON (non-finite numbers become null)."""
    print(json.dumps(finite_json(value), allow_nan=False))


@contextmanager
def progress_bar(
    total: int, label: str, enabled: bool, *, completed: int = 0,
    console: Console | None = None,
) -> Iterator[Any]:
    """A rich progress bar on stderr when it is a terminal; a no-op otherwise.
    ``completed`` is the work already done before (a resumed league): it fills the bar
    without counting toward the speed that the time estimate comes from."""
    if not enabled:
        yield lambda: None
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
        transient=True,
    )
    with progress:
        task = progress.add_task(label, total=total, completed=min(completed, total))
        yield lambda: progress.advance(task)


def summary_rows(bots: Sequence[str], outcomes: Sequence[GameOutcome]) -> list[dict[str, Any]]:
    stats: dict[str, dict[str, Any]] = {
        b: {"bot": b, "games": 0, "wins": 0, "place_sum": 0, "points": 0,
            "forfeits": defaultdict(int)}
        for b in bots
    }
    for outcome in outcomes:
        for seat in outcome.seats:
            row = stats[seat.bot]
            row["games"] += 1
            row["wins"] += seat.place == 1 and outcome.reason in ("win", "last_standing")
            row["place_sum"] += seat.place
            row["points"] += seat.points
            if seat.forfeit is not None:
                row["forfeits"][seat.forfeit[0]] += 1
    rows = []
    for row in stats.values():
        games = row["games"] or 1
        rows.append({
            "bot": row["bot"],
            "games": row["games"],
            "wins": row["wins"],
            "mean_place": row["place_sum"] / games,
            "mean_points": row["points"] / games,
            "forfeits": dict(row["forfeits"]),
        })
    rows.sort(key=lambda r: (r["mean_place"], -r["wins"]))
    return rows


def print_summary(console: Console, rows: Sequence[dict[str, Any]]) -> None:
    table = Table(title="Match results")
    for column in ("bot", "games", "wins", "mean place", "mean points", "forfeits"):
        table.add_column(column, justify="left" if column in ("bot", "forfeits") else "right")
    for row in rows:
        forfeits = ", ".join(f"{k} {v}" for k, v in sorted(row["forfeits"].items())) or "-"
        table.add_row(row["bot"], str(row["games"]), str(row["wins"]),
                      f"{row['mean_place']:.2f}", f"{row['mean_points']:.1f}", forfeits)
    console.print(table)


async def run_match_command(args: argparse.Namespace, rules: Rules, time: TimeControl) -> int:
    if not 2 <= len(args.bots) <= 10:
        raise UsageError(f"a match needs 2 to 10 bots, got {len(args.bots)}")
    bots: list[BotSpec] = unique_names([parse_bot_arg(b, i) for i, b in enumerate(args.bots)])
    bots = sandboxed_bots(args, bots)
    names = [b.name for b in bots]
    games = args.games if args.games is not None else len(bots)
    if games < 1:
        raise UsageError("--games must be at least 1")
    if args.strikes < 1:
        raise UsageError("--strikes must be at least 1")
    require_deal(rules, len(bots))
    require_directories(("--log-dir", args.log_dir), ("--replay-dir", args.replay_dir))
    seed = master_seed(args)
    settings = MatchSettings(
        rules=rules,
        time=time,
        fault_policy=args.fault_policy,
        strikes=args.strikes,
        restart=not args.no_restart,
        replay_dir=args.replay_dir,
        log_dir=args.log_dir,
        master_seed=seed,
    )
    if not args.no_bot_check:
        await require_bots(bots, time, limit=len(bots))
    console = Console()
    async with remote_seats(args, bots) as seats:
        with progress_bar(games, "games", sys.stderr.isatty() and not args.json) as advance:
            outcomes = []
            for rotation in range(min(len(bots), games)):
                outcomes += await play_unit(
                    match_games(names, games, seed, rotation), bots, settings,
                    on_game=lambda _: advance(), match_name=f"match-{seed}-rot{rotation}",
                    remote=seats,
                )
    outcomes.sort(key=lambda o: o.game.deal * len(bots) + o.game.rotation)
    if args.json:
        print_json({"seed": seed, "games": [o.to_json() for o in outcomes]})
    else:
        print_summary(console, summary_rows(names, outcomes))
    return 0
