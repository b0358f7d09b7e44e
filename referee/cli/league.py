"""``taki-referee league`` and ``taki-referee ratings``."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console
from rich.table import Table

from referee.cli.match import require_directories
from referee.cli.output import (
    FaultTally,
    add_columns,
    print_json,
    progress,
    table_console,
    time_cells,
)
from referee.cli.remote import remote_seats
from referee.cli.sandboxing import announce
from referee.competition import season_forfeits, season_pair_counts, season_time_use
from referee.config import load_league
from referee.core import GameOutcome, TimeSummary, TimeUse, UsageError
from referee.league import (
    ResultStore,
    StoreError,
    league_executor,
    league_size,
    play_league,
    rated_games,
)
from referee.ratings import (
    BotRating,
    RatingModel,
    RatingReport,
    model_named,
    rate,
    rate_pair_counts,
)

#: The most bots whose crosstable is printed (a thousand bots' would be a million cells).
CROSSTABLE_BOTS = 40
#: How the leaderboard names the rating models.
MODEL_TITLES = {"bradley-terry": "Bradley-Terry (pairwise)", "plackett-luce": "Plackett-Luce"}


@attrs.frozen
class Standings:
    """What the leaderboards print: the ratings and, per bot, its forfeits, time use
    and whether it retired (left the league file; shown only on request)."""

    report: RatingReport | None
    games: int
    forfeits: dict[str, dict[str, int]]
    times: Mapping[str, TimeUse | TimeSummary] = attrs.field(factory=dict)
    retired: frozenset[str] = frozenset()
    include_retired: bool = False
    #: Games voided every time they were played (no result), and the plays of games
    #: that infrastructure faults voided (docs/leagues.md, "Voided games").
    voided: int = 0
    void_plays: int = 0

    @classmethod
    def read(cls, store: ResultStore, report: RatingReport | None,
             include_retired: bool = False) -> Standings:
        """The standings of ``store``; its forfeits and time use from its season's
        aggregates when it keeps them up to date (a competition's: no seat is read)."""
        forfeits = season_forfeits(store.path)
        times: Mapping[str, TimeUse | TimeSummary] | None = season_time_use(store.path)
        return cls(report, store.game_count(),
                   store.forfeit_counts() if forfeits is None else forfeits,
                   store.time_use() if times is None else times,
                   frozenset(store.retired()), include_retired, store.voided_count(),
                   len(store.infra_events()))

    def shown(self) -> list[BotRating]:
        """The rated bots to show, best first."""
        if self.report is None:
            return []
        return [bot for bot in self.report.bots
                if self.include_retired or bot.name not in self.retired]

    def hidden(self) -> list[str]:
        """The retired bots left out."""
        if self.report is None or self.include_retired:
            return []
        return [bot.name for bot in self.report.bots if bot.name in self.retired]

    def label(self, name: str) -> str:
        return f"{name} (retired)" if name in self.retired else name

    def to_json(self) -> dict[str, Any]:
        ratings = []
        for bot in self.shown():
            entry = {
                "bot": bot.name,
                "elo": round(bot.elo, 1),
                "ci95": None if bot.ci95 is None else [round(x, 1) for x in bot.ci95],
                "games": bot.games,
                "score": round(bot.score, 4),
                "time_ms": self.times.get(bot.name, TimeUse()).to_json(),
            }
            if self.include_retired:
                entry["retired"] = bot.name in self.retired
            ratings.append(entry)
        return {"games": self.games, "ratings": ratings, "forfeits": self.forfeits,
                "voided": self.voided, "void_plays": self.void_plays}


def print_leaderboard(console: Console, standings: Standings, crosstable: bool = False) -> None:
    caption = None if standings.report is None else (
        f"Elo from the {MODEL_TITLES[standings.report.model]} fit")
    voided = f", {standings.voided} voided" if standings.voided else ""
    table = Table(title=f"Leaderboard ({standings.games} games{voided})", caption=caption)
    add_columns(table, ("#", "bot", "Elo", "95% CI", "games", "score", "forfeits"),
                left=("bot", "forfeits"))
    shown = standings.shown()
    for rank, bot in enumerate(shown, 1):
        ci = "-" if bot.ci95 is None else f"{bot.ci95[0]:.0f} .. {bot.ci95[1]:.0f}"
        counts = standings.forfeits.get(bot.name, {})
        lost = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        table.add_row(str(rank), standings.label(bot.name), f"{bot.elo:.0f}", ci,
                      str(bot.games), f"{bot.score:.3f}", lost or "-",
                      *time_cells(standings.times.get(bot.name, TimeUse())))
    console.print(table)
    if standings.void_plays:
        console.print(f"{standings.void_plays} plays voided by infrastructure faults (timeouts"
                      f" the machine caused), {standings.voided} games voided every time",
                      highlight=False)
    hidden = standings.hidden()
    if hidden:
        console.print(f"retired, not shown (--include-retired): {', '.join(hidden)}",
                      highlight=False)
    if not crosstable or standings.report is None:
        return
    if len(shown) > CROSSTABLE_BOTS:
        console.print(f"crosstable not printed: {len(shown)} bots (at most {CROSSTABLE_BOTS};"
                      " --json has every pair's likelihood of superiority)", highlight=False)
        return
    report = standings.report
    names = [bot.name for bot in shown]
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
    ValueError when they cannot be fitted. A competition's database is rated from its
    season's pair counts when they are up to date and the model is Bradley-Terry
    (:func:`referee.ratings.rate_pair_counts`: no game is read)."""
    model = args.model or model
    counts = season_pair_counts(store.path) if model != "plackett-luce" else None
    try:
        if counts is not None:
            if not counts.names:
                return None
            return rate_pair_counts(counts, anchor=args.anchor, anchor_elo=args.anchor_elo,
                                    resamples=200, seed=0, prior=args.prior)
        games = rated_games(store)
        if not games:
            return None
        return rate(games, anchor=args.anchor, anchor_elo=args.anchor_elo, resamples=200,
                    seed=0, prior=args.prior, model=model)
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


async def run_league_command(args: argparse.Namespace) -> int:
    config = load_league(args.file)
    _check_rating_args(args, [b.name for b in config.bots])
    require_directories(("--log-dir", args.log_dir))
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    announce(config.bots)  # no bwrap, or a limit the host cannot enforce: stop here
    executor = league_executor(config, workers=args.workers, dask=args.dask)
    bar = sys.stderr.isatty() and not args.json
    tally = FaultTally()
    already = _stored_games(args.db)

    def seeded(seed: int) -> None:
        print(f"master seed {seed} (kept in {args.db})", file=sys.stderr)

    with progress(league_size(config), "league", terminal_bar=bar, completed=already,
                  interval_s=args.progress_interval) as advance:

        def finished(outcome: GameOutcome) -> None:
            tally.add(outcome)
            advance()

        async with remote_seats(args, config.bots) as seats:
            run = await play_league(
                config, args.db, executor=executor, check_bots=not args.no_bot_check,
                log_dir=args.log_dir, on_seed=seeded, on_game=finished, remote=seats,
            )
    with ResultStore(args.db, readonly=True) as store:
        try:
            report = _rate(store, args, config.rating_model)
        except ValueError as exc:
            raise UsageError(f"the games are stored, but cannot be rated: {exc}") from None
        standings = Standings.read(store, report)
    if args.json:
        print_json({**standings.to_json(), "seed": run.seed})
    elif report is not None:
        print_leaderboard(table_console(), standings)
    tally.print(stored=standings.forfeits, log_dir=args.log_dir)
    return 0


def _stored_games(db: Path) -> int:
    """How many games the database holds already (0 when there is none yet)."""
    if not db.exists():
        return 0
    with ResultStore(db, readonly=True) as store:
        return store.game_count()


def ratings_command(args: argparse.Namespace) -> int:
    _check_rating_args(args)
    if not args.db.exists():
        raise UsageError(f"no results database at {args.db}")
    try:
        with ResultStore(args.db, readonly=True) as store:
            report = _rate(store, args, model_named(store.meta("rating_model")))
            standings = Standings.read(store, report, args.include_retired)
    except (StoreError, ValueError, KeyError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        out = standings.to_json()
        if report is not None:
            shown = {bot.name for bot in standings.shown()}
            out["los"] = {a: {b: p for b, p in row.items() if b in shown}
                          for a, row in report.los.items() if a in shown}
        print_json(out)
    elif report is None:
        table_console().print("no games in the database yet")
    else:
        print_leaderboard(table_console(), standings, crosstable=True)
    return 0
