"""The arguments of the competition's commands: ``serve``, ``participants`` and
``submit`` (standard library only, as ``referee.cli.parser``)."""

from __future__ import annotations

import argparse
from pathlib import Path

#: Where ``serve`` listens by default.
DEFAULT_LISTEN = "127.0.0.1:8080"
#: The database of a competition by default.
DEFAULT_DB = Path("competition.sqlite")


def _db_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", type=Path, default=DEFAULT_DB,
                        help=f"the competition's database (default {DEFAULT_DB})")


def add_competition_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve", help="host a competition: the HTTP API for submissions and the ladder"
                      " (docs/competition.md)",
        description="Serve a competition: participants upload bots, each is built and"
                    " checked in the sandbox, and the bots that pass play a continuous"
                    " ladder. Run the same command again after a stop: it goes on.",
    )
    serve.add_argument("competition", type=Path, metavar="COMPETITION.toml")
    _db_arg(serve)
    serve.add_argument("--listen", metavar="HOST:PORT", default=DEFAULT_LISTEN,
                       help=f"where the HTTP API listens (default {DEFAULT_LISTEN})")
    serve.add_argument("--timing", action="store_true",
                       help="print the event loop's lag, busy share and slow steps every"
                            " 30 s, and stamp each answer's Server-Timing with when its"
                            " request arrived (for benchmarks/season.py)")

    people = sub.add_parser("participants", help="add, list, disable or enable a"
                                                 " competition's participants")
    action = people.add_subparsers(dest="participants_command", required=True,
                                   metavar="ACTION")
    add = action.add_parser("add", help="add a participant and print their token once")
    add.add_argument("name")
    _db_arg(add)
    listing = action.add_parser("list", help="list the participants")
    _db_arg(listing)
    disable = action.add_parser("disable", help="disable a participant: their token stops"
                                                " working and their bots leave the ladder")
    disable.add_argument("name")
    _db_arg(disable)
    enable = action.add_parser("enable", help="enable a disabled participant again: their"
                                              " token works again and the bots their"
                                              " disabling retired return to the ladder")
    enable.add_argument("name")
    _db_arg(enable)

    submit = sub.add_parser(
        "submit", help="upload a bot to a competition and wait for its check",
        description="Upload a bot folder (with bot.toml) or an archive of one to a"
                    " competition server, then wait for its build and check. Exit status"
                    " 0 when the bot entered the ladder, 1 when it was refused or failed"
                    " a step (the step's output is printed), 2 for a mistake of the"
                    " command line or a server that cannot be reached.",
    )
    submit.add_argument("url", metavar="URL", help="the server, e.g. http://127.0.0.1:8080"
                        " (with --dry-run it may be left out)")
    submit.add_argument("path", type=Path, metavar="PATH", nargs="?",
                        help="the bot's folder, or a .tar.gz, .tar or .zip archive of it")
    submit.add_argument("--dry-run", action="store_true",
                        help="upload nothing: run the server's unpacking, build and check"
                             " on this machine, in the same sandbox, limits and time"
                             " control, and print what the server would (docs/competition.md)")
    submit.add_argument("--config", type=Path, default=None, metavar="COMPETITION.toml",
                        help="with --dry-run: the competition's file, for its time control"
                             " and limits (default: those of serve without one)")
    submit.add_argument("--token", default=None,
                        help="your token (default: $TAKI_REFEREE_TOKEN)")
    submit.add_argument("--no-wait", action="store_true",
                        help="return once the upload is queued")
    submit.add_argument("--timeout", type=float, default=1800.0, metavar="SECONDS",
                        help="how long to wait for the build and check (default 1800)")

    finals = sub.add_parser(
        "finals", help="close submissions and play the finals: a full round robin among"
                       " each participant's latest bot",
        description="Freeze the competition's submissions (every later upload is refused),"
                    " then play a full round robin of --deals deals among each"
                    " participant's latest bot into a database of its own, and write the"
                    " final standings (JSON) and report (HTML). Run it again after a stop:"
                    " only the missing games are played.",
    )
    finals.add_argument("competition", type=Path, metavar="COMPETITION.toml")
    _db_arg(finals)
    finals.add_argument("--finals-db", type=Path, default=None, metavar="PATH",
                        help="the finals' database (default: DB-finals.sqlite beside --db)")
    finals.add_argument("--deals", type=int, default=10,
                        help="deals per table, each at every seat rotation (default 10)")
    finals.add_argument("--table-size", type=int, default=2,
                        help="players per table (default 2)")
    finals.add_argument("-o", "--output", type=Path, default=Path("finals.html"),
                        help="the final report (default finals.html; the standings go"
                             " beside it as .json)")

    verify = sub.add_parser(
        "verify-season", help="check, once a season has ended, that every deal of its"
                              " ladder came from the seed it committed to",
        description="Recompute the season's commitment from its published seed and salt,"
                    " then each ladder game's deck seed from its id, and re-play each"
                    " replay from it. Exit status 0 when everything agrees, 1 otherwise.",
    )
    verify.add_argument("replays", type=Path, nargs="*", metavar="REPLAY",
                        help="replay files of the season's games")
    verify.add_argument("--db", type=Path, default=None,
                        help="the competition's database: its ladder's games (and, without"
                             " --seed and --salt, the season it keeps)")
    verify.add_argument("--seed", default=None, help="the season's published seed")
    verify.add_argument("--salt", default=None, help="the season's published salt")
    verify.add_argument("--commitment", default=None,
                        help="the commitment published when the season began")
