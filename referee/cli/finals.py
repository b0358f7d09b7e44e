"""``taki-referee finals COMPETITION.toml``: close submissions, then a full round robin
among each participant's latest bot, with the final standings and report (the same
finals the organizer's page starts inside the server:
``referee.competition.play_planned_finals``)."""

from __future__ import annotations

import argparse

import trio

from referee.competition import (
    CompetitionStore,
    FinalsPlan,
    Workspace,
    check_sandbox,
    finals_db,
    finals_title,
    load_competition,
    play_planned_finals,
)
from referee.core import UsageError
from referee.present import write_report


async def run_finals_command(args: argparse.Namespace) -> int:
    config = load_competition(args.competition)
    check_sandbox(config)
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
                                              args.output.with_suffix(".json"))
    await trio.to_thread.run_sync(
        lambda: write_report(db, args.output, title=finals_title(config)))
    for row in standings:
        print(f"{row.place:>3}  {row.bot:<24} {row.elo:7.1f}  {row.games} games")
    print(f"final standings in {args.output.with_suffix('.json')}, report in {args.output}")
    return 0
