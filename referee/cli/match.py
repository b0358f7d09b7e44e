"""``taki-referee match``: play games between bots given on the command line."""

from __future__ import annotations

import argparse
import secrets
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console
from rich.table import Table

from referee.cli.output import (
    FaultTally,
    add_columns,
    print_json,
    progress,
    table_console,
    time_cells,
)
from referee.cli.remote import remote_seats
from referee.cli.sandboxing import sandboxed_bots
from referee.config import directory_error, parse_bot_arg, unique_names
from referee.core import (
    BotSpec,
    GameOutcome,
    MatchSettings,
    ScheduledGame,
    SeriesResult,
    TimeControl,
    TimeUse,
    UsageError,
    fresh_seed,
    match_games,
    series_games,
    series_results,
)
from referee.league import require_bots
from referee.match import play_unit
from referee.rules import DealError, EndReason, Rules

#: A match's run id (in its log files' names): 4 random bytes, 8 hexadecimal digits.
RUN_ID_BYTES = 4


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


def summary_rows(bots: Sequence[str], outcomes: Sequence[GameOutcome]) -> list[dict[str, Any]]:
    stats: dict[str, dict[str, Any]] = {
        b: {"bot": b, "games": 0, "wins": 0, "place_sum": 0, "points": 0,
            "forfeits": defaultdict(int), "times": []}
        for b in bots
    }
    for outcome in outcomes:
        for seat in outcome.seats:
            row = stats[seat.bot]
            row["times"].append(seat.time)
            row["games"] += 1
            won = outcome.reason in (EndReason.WIN, EndReason.LAST_STANDING)
            row["wins"] += seat.place == 1 and won
            row["place_sum"] += seat.place
            row["points"] += seat.points
            if seat.forfeit is not None:
                row["forfeits"][str(seat.forfeit.reason)] += 1
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
            "time": TimeUse.merge(row["times"]),
        })
    rows.sort(key=lambda r: (r["mean_place"], -r["wins"]))
    return rows


def print_summary(console: Console, rows: Sequence[dict[str, Any]]) -> None:
    table = Table(title="Match results")
    add_columns(table, ("bot", "games", "wins", "mean place", "mean points", "forfeits"),
                left=("bot", "forfeits"))
    for row in rows:
        forfeits = ", ".join(f"{k} {v}" for k, v in sorted(row["forfeits"].items())) or "-"
        table.add_row(row["bot"], str(row["games"]), str(row["wins"]),
                      f"{row['mean_place']:.2f}", f"{row['mean_points']:.1f}", forfeits,
                      *time_cells(row["time"]))
    console.print(table)


def game_count(args: argparse.Namespace, bots: int) -> int:
    """How many games the match plays (``--games``, by default every bot plays first
    once, or with ``--series`` each seating plays one series), after the counts among
    the arguments are checked: UsageError for the first out of its range."""
    if args.series is not None and args.series < 1:
        raise UsageError("--series must be at least 1 game")
    games: int = args.games if args.games is not None else bots * (args.series or 1)
    if games < 1:
        raise UsageError("--games must be at least 1")
    return games


def checked_settings(**fields: Any) -> MatchSettings:
    """MatchSettings of ``fields`` taken from the command's options; UsageError naming
    the option for a value out of its bounds (the bounds are MatchSettings' own
    validators, whose message starts with the field's name)."""
    try:
        return MatchSettings(**fields)
    except ValueError as exc:  # "strikes must be at least 1, not 0"
        field, _, rest = str(exc).partition(" ")
        raise UsageError(f"--{field.replace('_', '-')} {rest}") from None


def match_settings(args: argparse.Namespace, rules: Rules, time: TimeControl) -> MatchSettings:
    """The games' settings of a match command (the master seed comes later: it is
    printed, and a bad option is refused before anything is printed)."""
    return checked_settings(
        rules=rules, time=time, fault_policy=args.fault_policy, strikes=args.strikes,
        restart=not args.no_restart, replay_dir=args.replay_dir, log_dir=args.log_dir,
        void_replays=args.void_replays)


async def run_match_command(args: argparse.Namespace, rules: Rules, time: TimeControl) -> int:
    if not 2 <= len(args.bots) <= 10:
        raise UsageError(f"a match needs 2 to 10 bots, got {len(args.bots)}")
    bots: list[BotSpec] = unique_names([parse_bot_arg(b, i) for i, b in enumerate(args.bots)])
    bots = sandboxed_bots(args, bots)
    names = [b.name for b in bots]
    games = game_count(args, len(bots))
    settings = match_settings(args, rules, time)
    require_deal(rules, len(bots))
    require_directories(("--log-dir", args.log_dir), ("--replay-dir", args.replay_dir))
    seed = master_seed(args)
    # Logs are named after a run id, never the seed: a bot that lists the log directory
    # (the referee's working directory is an unsandboxed bot's) must not learn the deals.
    run = secrets.token_hex(RUN_ID_BYTES)
    settings = attrs.evolve(settings, master_seed=seed)
    outcomes: list[GameOutcome] = []
    tally = FaultTally()
    order = {g.game_id: i for i, g in enumerate(schedule(names, games, seed, args.series))}

    def result(interrupted: bool) -> dict[str, Any]:
        """What ``--json`` prints: the games played so far, in the schedule's order."""
        played = sorted(outcomes, key=lambda o: order[o.game.game_id])
        voided = sum(o.voided for o in played)
        out: dict[str, Any] = {"seed": seed, "interrupted": interrupted,
                               "games": [o.to_json() for o in played],
                               "voided": voided, "void_plays": tally.void_plays}
        if args.series:
            out["series"] = [s.to_json() for s in series_results(
                o.series_game() for o in played if not o.voided)]
        return out

    def interrupted() -> None:
        """On Ctrl-C or SIGTERM: the games finished so far (with --json, also as JSON
        on standard output, marked interrupted)."""
        if args.json:
            print_json(result(True))
        if outcomes:
            err = table_console(stderr=True)
            err.print(f"partial result: {len(outcomes)} of {games} games were played")
            print_summary(err, summary_rows(names, outcomes))
            tally.print()

    args.on_interrupt = interrupted
    if not args.no_bot_check:
        await require_bots(bots, time, limit=len(bots))
    console = table_console()
    bar = sys.stderr.isatty() and not args.json
    async with remote_seats(args, bots) as seats:
        with progress(games, "match", terminal_bar=bar,
                      interval_s=args.progress_interval) as advance:

            def finished(outcome: GameOutcome) -> None:
                outcomes.append(outcome)
                tally.add(outcome)
                advance()

            for rotation in range(len(bots)):
                await play_unit(
                    schedule(names, games, seed, args.series, rotation), bots, settings,
                    on_game=finished, match_name=f"match-{run}-rot{rotation}",
                    remote=seats,
                )
    args.on_interrupt = None
    if args.json:
        print_json(result(False))
    else:
        outcomes.sort(key=lambda o: order[o.game.game_id])
        print_summary(console, summary_rows(names, outcomes))
        if args.series:
            print_series(console, names, series_results(o.series_game() for o in outcomes))
    tally.print()
    return 0


def schedule(names: Sequence[str], games: int, seed: int, series: int | None,
             rotation: int | None = None) -> Iterator[ScheduledGame]:
    """The games of the match (of one seating with ``rotation``): single games, or
    series of ``series`` games (R24)."""
    if series:
        return series_games(names, games, series, seed, rotation)
    return match_games(names, games, seed, rotation)


def print_series(console: Console, names: Sequence[str], results: Sequence[SeriesResult]
                 ) -> None:
    """Each series's penalty points and places (R24: the lowest total wins)."""
    table = Table(title="Series (penalty points, place)")
    table.add_column("series")
    table.add_column("games", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    wins = dict.fromkeys(names, 0)
    for result in results:
        by_bot = {s.bot: s for s in result.standings}
        for standing in result.standings:
            wins[standing.bot] += standing.place == 1
        table.add_row(result.name, str(len(result.games)), *(
            f"{by_bot[n].penalty} ({by_bot[n].place})" if n in by_bot else "-" for n in names
        ))
    table.add_row("series won", "", *(str(wins[n]) for n in names))
    console.print(table)
