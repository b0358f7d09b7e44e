"""``taki-referee league`` and ``taki-referee ratings``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from .cli_match import progress_bar
from .cli_remote import remote_seats
from .dask_executor import ClusterError, DaskExecutor
from .league import Executor, executor_for, league_size, rated_games, run_league
from .ratings import RatingReport, rate
from .settings import LeagueConfig, load_league
from .store import ResultStore, StoreError


def report_json(report: RatingReport | None, games: int, forfeits: dict[str, dict[str, int]]
                ) -> dict[str, Any]:
    ratings = []
    if report is not None:
        for bot in report.bots:
            ratings.append({
                "bot": bot.name,
                "elo": round(bot.elo, 1),
                "ci95": None if bot.ci95 is None else [round(x, 1) for x in bot.ci95],
                "games": bot.games,
                "score": round(bot.score, 4),
            })
    return {"games": games, "ratings": ratings, "forfeits": forfeits}


def print_leaderboard(console: Console, report: RatingReport, games: int,
                      forfeits: dict[str, dict[str, int]], crosstable: bool = False) -> None:
    table = Table(title=f"Leaderboard ({games} games)")
    for column in ("#", "bot", "Elo", "95% CI", "games", "score", "forfeits"):
        table.add_column(column, justify="left" if column in ("bot", "forfeits") else "right")
    for rank, bot in enumerate(report.bots, 1):
        ci = "-" if bot.ci95 is None else f"{bot.ci95[0]:.0f} .. {bot.ci95[1]:.0f}"
        lost = ", ".join(f"{k} {v}" for k, v in sorted(forfeits.get(bot.name, {}).items()))
        table.add_row(str(rank), bot.name, f"{bot.elo:.0f}", ci, str(bot.games),
                      f"{bot.score:.3f}", lost or "-")
    console.print(table)
    if not crosstable:
        return
    names = list(report.names)
    cross = Table(title="Crosstable: row's score against column (pairwise), and LOS")
    cross.add_column("")
    for name in names:
        cross.add_column(name, justify="right")
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append("-")
                continue
            record = report.crosstable.get(a, {}).get(b)
            los = report.los[a][b]
            cells.append("" if record is None else f"{record.score:.2f} ({los:.0%})")
        cross.add_row(a, *cells)
    console.print(cross)


def _rate(store: ResultStore, anchor: str | None = None, anchor_elo: float = 1500.0
          ) -> RatingReport | None:
    games = rated_games(store)
    if not games:
        return None
    return rate(games, anchor=anchor, anchor_elo=anchor_elo, resamples=200, seed=0)


def _executor(args: argparse.Namespace, config: LeagueConfig) -> Executor:
    """Where the games are played: ``--dask``, else the league file's ``executor``."""
    from .cli import UsageError

    try:
        if args.dask is not None:
            return DaskExecutor(args.dask)
        return executor_for(config)
    except ClusterError as exc:
        raise UsageError(str(exc)) from None


async def run_league_command(args: argparse.Namespace) -> int:
    config = load_league(args.file)
    if args.dask is not None and any(b.remote for b in config.bots):
        from .cli import UsageError

        raise UsageError("--dask: remote bots connect to this referee; they need the local"
                         " executor")
    executor = _executor(args, config)
    try:
        store = ResultStore(args.db)
    except StoreError as exc:
        from .cli import UsageError

        raise UsageError(str(exc)) from None
    console = Console()
    with store:
        from .cli import UsageError

        total = league_size(config)
        already = store.game_count()
        show = sys.stderr.isatty() and not args.json
        try:
            with progress_bar(total, "league", show) as advance:
                for _ in range(min(already, total)):
                    advance()
                async with remote_seats(args, config.bots) as seats:
                    await run_league(config, store, log_dir=args.log_dir,
                                     on_game=lambda _: advance(), executor=executor,
                                     remote=seats)
        except (StoreError, ClusterError) as exc:
            raise UsageError(str(exc)) from None
        report = _rate(store)
        games = store.game_count()
        forfeits = store.forfeit_counts()
    if args.json:
        print(json.dumps(report_json(report, games, forfeits)))
    elif report is not None:
        print_leaderboard(console, report, games, forfeits)
    return 0


def ratings_command(args: argparse.Namespace) -> int:
    from .cli import UsageError

    if not args.db.exists():
        raise UsageError(f"no results database at {args.db}")
    try:
        with ResultStore(args.db) as store:
            report = _rate(store, args.anchor, args.anchor_elo)
            games = store.game_count()
            forfeits = store.forfeit_counts()
    except (StoreError, ValueError, KeyError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        out = report_json(report, games, forfeits)
        if report is not None:
            out["los"] = {a: dict(row) for a, row in report.los.items()}
        print(json.dumps(out))
    elif report is None:
        Console().print("no games in the database yet")
    else:
        print_leaderboard(Console(), report, games, forfeits, crosstable=True)
    return 0
