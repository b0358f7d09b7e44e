"""``taki-referee serve COMPETITION.toml``: the competition's HTTP API, submission
pipeline and ladder in one process (docs/competition.md)."""

from __future__ import annotations

import argparse
import contextlib

from referee.cli.toolchains import describe_toolchains, sandbox_toolchains
from referee.competition import load_competition
from referee.server import serve_competition
from referee.shell import SandboxError, parse_address


async def run_serve_command(args: argparse.Namespace) -> int:
    config = load_competition(args.competition)
    host, port = parse_address(args.listen)
    # What the participants' builds will have (serve refuses to run without a sandbox).
    with contextlib.suppress(SandboxError):
        print(describe_toolchains(await sandbox_toolchains()), flush=True)
    await serve_competition(config, args.db, host, port,
                            say=lambda line: print(line, flush=True), timing=args.timing)
    return 0
