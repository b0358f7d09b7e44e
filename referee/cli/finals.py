"""``taki-referee finals COMPETITION.toml``: close submissions, then a full round robin
among each participant's latest bot, with the final standings and report (the same
finals the organizer's page starts inside the server: ``referee.server.finals_link``)."""

from __future__ import annotations

import argparse

from referee.competition import CompetitionStore, FinalsPlan, Workspace, load_competition
from referee.core import UsageError
from referee.server import finals_db, play_planned_finals, require_sandbox


async def run_finals_command(args: argparse.Namespace) -> int:
    config = load_competition(args.competition)
    require_sandbox(config)
    if args.deals < 1:
        raise UsageError(f"--deals must be at least 1, got {args.deals}")
    db = args.finals_db or finals_db(args.db)
    workspace = Workspace(config.files_dir(args.db))
    with CompetitionStore(args.db) as store:
        store.freeze()
        finalists = store.finalists()
        print(f"submissions are closed; the finalists: "
              f"{', '.join(f'{s.entrant} ({s.participant})' for s in finalists) or 'none'}",
              flush=True)
        if len(finalists) < args.table_size:
            raise UsageError(f"the finals need at least {args.table_size} participants with"
                             f" a bot in the ladder, found {len(finalists)}")
        plan = FinalsPlan(tuple(str(s.entrant) for s in finalists), args.deals,
                          args.table_size)
        standings = await play_planned_finals(plan, config, store, workspace, db,
                                              args.output)
    for row in standings:
        print(f"{row.place:>3}  {row.bot:<24} {row.elo:7.1f}  {row.games} games")
    print(f"final standings in {args.output.with_suffix('.json')}, report in {args.output}")
    return 0
