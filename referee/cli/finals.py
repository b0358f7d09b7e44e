"""``taki-referee finals COMPETITION.toml``: close submissions, then a full round robin
among each participant's latest bot, with the final standings and report."""

from __future__ import annotations

import argparse

import trio

from referee.competition import (
    CompetitionStore,
    FinalsSettings,
    Workspace,
    bot_spec,
    load_competition,
    run_finals,
)
from referee.core import MatchSettings, UsageError
from referee.present import write_report
from referee.server import require_sandbox


async def run_finals_command(args: argparse.Namespace) -> int:
    config = load_competition(args.competition)
    require_sandbox(config)
    if args.deals < 1:
        raise UsageError(f"--deals must be at least 1, got {args.deals}")
    finals_db = args.finals_db or args.db.with_name(f"{args.db.stem}-finals.sqlite")
    workspace = Workspace(config.files_dir(args.db))
    with CompetitionStore(args.db) as store:
        store.freeze()
        finalists = store.finalists()
    print(f"submissions are closed; the finalists: "
          f"{', '.join(f'{s.entrant} ({s.participant})' for s in finalists) or 'none'}",
          flush=True)
    if len(finalists) < args.table_size:
        raise UsageError(f"the finals need at least {args.table_size} participants with a bot"
                         f" in the ladder, found {len(finalists)}")
    bots = [bot_spec(s, str(s.entrant), config, workspace) for s in finalists]
    ladder = config.ladder
    match = MatchSettings(rules=config.rules, time=config.time,
                          log_dir=workspace.root / "finals-logs")
    settings = FinalsSettings(
        deals=args.deals, table_size=args.table_size, match=match,
        seed=ladder.seed or None, concurrency=ladder.concurrency,
        workers=ladder.workers or None, dask=ladder.dask or None)
    standings_path = args.output.with_suffix(".json")
    standings = await run_finals(finals_db, bots, settings, standings_path)
    for row in standings:
        print(f"{row.place:>3}  {row.bot:<24} {row.elo:7.1f}  {row.games} games")
    await trio.to_thread.run_sync(write_report, finals_db, args.output)
    print(f"final standings in {standings_path}, report in {args.output}")
    return 0
