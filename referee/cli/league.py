"""``taki-referee league`` and ``taki-referee ratings``."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from referee.cli.match import print_json, progress_bar, require_directories
from referee.cli.remote import remote_seats
from referee.cli.sandboxing import announce
from referee.config.settings import LeagueConfig, load_league
from referee.core.errors import UsageError
from referee.league.botcheck import require_bots
from referee.league.dask_executor import ClusterError, DaskExecutor
from referee.league.runner import (
    Executor,
    LocalExecutor,
    league_size,
    run_league,
    with_seed,
)
from referee.league.store import ResultStore, StoreError, rated_games
from referee.ratings.leaderboard import RatingModel, RatingReport, rate

#: How the leaderboard names the rating models.
MODEL_TITLES = {"bradley-terry": "Bradley-Terry (pairwise)", "plackett-luce": "Plackett-Luce"}


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
    table = Table(title=f"Leaderboard ({games} games)",
                  caption=f"Elo from the {MODEL_TITLES[report.model]} fit")
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


def _rate(store: ResultStore, args: argparse.Namespace,
          model: RatingModel | None = None) -> RatingReport | None:
    """The ratings of the stored games with the command's ``--anchor``, ``--anchor-elo``,
    ``--prior`` and ``--model`` (else ``model``, else the default of the table sizes);
    ValueError when they cannot be fitted."""
    games = rated_games(store)
    if not games:
        return None
    try:
        return rate(games, anchor=args.anchor, anchor_elo=args.anchor_elo, resamples=200,
                    seed=0, prior=args.prior, model=args.model or model)
    except ValueError as exc:
        if args.prior == 0 and "perfect separation" in str(exc):
            raise ValueError(
                f"{exc}: a bot won or lost every game; rate with --prior above 0"
            ) from None
        raise


def _check_rating_args(args: argparse.Namespace, bots: list[str] | None = None) -> None:
    if not (math.isfinite(args.prior) and args.prior >= 0):
        raise UsageError(f"--prior must be a number of games >= 0, got {args.prior}")
    if not math.isfinite(args.anchor_elo):
        raise UsageError(f"--anchor-elo must be a finite number, got {args.anchor_elo}")
    if bots is not None and args.anchor is not None and args.anchor not in bots:
        raise UsageError(f"--anchor {args.anchor}: not a bot of the league"
                         f" (its bots: {', '.join(bots)})")


def _executor(args: argparse.Namespace, config: LeagueConfig) -> Executor:
    """Where the games are played: ``--dask``, else the league file's ``executor``."""
    try:
        if args.dask is not None:
            return DaskExecutor(args.dask)
        if config.executor != "local":
            return DaskExecutor(config.executor)
        return LocalExecutor(config.concurrency)
    except ClusterError as exc:
        raise UsageError(str(exc)) from None


async def run_league_command(args: argparse.Namespace) -> int:
    config = load_league(args.file)
    _check_rating_args(args, [b.name for b in config.bots])
    require_directories(("--log-dir", args.log_dir))
    if args.dask is not None and any(b.remote for b in config.bots):
        raise UsageError("--dask: remote bots connect to this referee; they need the local"
                         " executor")
    announce(config.bots)  # no bwrap, or a limit the host cannot enforce: stop here
    executor = _executor(args, config)
    if not args.no_bot_check and not isinstance(executor, DaskExecutor):
        # Before the database is opened: a league whose bots cannot start stores
        # nothing. On Dask the bots need only exist on the workers, which check them.
        await require_bots(config.bots, config.time,
                           limit=config.concurrency * config.table_size)
    try:
        store = ResultStore(args.db)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    console = Console()
    with store:
        total = league_size(config)
        already = store.game_count()
        show = sys.stderr.isatty() and not args.json
        try:
            store.claim()
            config = with_seed(config, store)
            print(f"master seed {config.seed} (kept in {args.db})", file=sys.stderr)
            with progress_bar(total, "league", show, completed=already) as advance:
                async with remote_seats(args, config.bots) as seats:
                    await run_league(config, store, log_dir=args.log_dir,
                                     on_game=lambda _: advance(), executor=executor,
                                     remote=seats)
        except (StoreError, ClusterError) as exc:
            raise UsageError(str(exc)) from None
        try:
            report = _rate(store, args, config.rating_model)
        except ValueError as exc:
            raise UsageError(f"the games are stored, but cannot be rated: {exc}") from None
        games = store.game_count()
        forfeits = store.forfeit_counts()
    if args.json:
        print_json({**report_json(report, games, forfeits), "seed": config.seed})
    elif report is not None:
        print_leaderboard(console, report, games, forfeits)
    return 0


def ratings_command(args: argparse.Namespace) -> int:
    _check_rating_args(args)
    if not args.db.exists():
        raise UsageError(f"no results database at {args.db}")
    try:
        with ResultStore(args.db, readonly=True) as store:
            report = _rate(store, args)
            games = store.game_count()
            forfeits = store.forfeit_counts()
    except (StoreError, ValueError, KeyError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        out = report_json(report, games, forfeits)
        if report is not None:
            out["los"] = {a: dict(row) for a, row in report.los.items()}
        print_json(out)
    elif report is None:
        Console().print("no games in the database yet")
    else:
        print_leaderboard(Console(), report, games, forfeits, crosstable=True)
    return 0
