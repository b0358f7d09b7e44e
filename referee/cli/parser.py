"""The ``taki-referee`` command line's arguments.

Only the standard library is imported here: ``--version``, ``--help`` and a mistake in
the arguments are answered before trio, rich or the rules are loaded
(``benchmarks/cli_startup.py`` measures it). Facts that belong to heavier modules (the
rules presets) are looked up only when argparse needs them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from referee import __version__
from referee.cli.competition_parser import add_competition_commands
from referee.core import DEFAULT_JOIN_TIMEOUT_S, DEFAULT_TIME_BASIS
from referee.ratings import MULTIPLAYER_MODEL, RATING_MODELS

SEED_HELP = (
    "master seed the deals come from (default: a fresh one from the operating system,"
    " printed and in --json, so that --seed repeats the run)"
)


def _time_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("time control (milliseconds)")
    group.add_argument("--move-ms", type=int, default=1000,
                       help="limit per decision (default 1000)")
    group.add_argument("--bank-ms", type=int, default=None, help="Fischer time bank (default none)")
    group.add_argument("--increment-ms", type=int, default=0, help="added to the bank per decision")
    group.add_argument("--reaction-ms", type=int, default=1000,
                       help="limit for a +3 Breaker reaction (default 1000)")
    group.add_argument("--startup-ms", type=int, default=10_000,
                       help="limit for a bot's start-up handshake (default 10000)")
    group.add_argument("--time-basis", choices=("wall", "cpu"), default=DEFAULT_TIME_BASIS,
                       help="what the limits measure: the CPU time of the bot's processes,"
                            " with a wall-time cap of 10 times the limit (default; wall"
                            " time for a bot whose CPU time cannot be read), or wall time"
                            " (docs/leagues.md, 'Time basis')")
    group.add_argument("--void-replays", type=int, default=2, metavar="N",
                       help="play a game voided by an infrastructure fault (a timeout the"
                            " machine caused) again up to N times (default 2); past that it"
                            " is counted as voided, never as a loss")


def _rules_args(parser: argparse.ArgumentParser) -> None:
    # No argparse choices: it would load the rules core to list them in every help
    # page. Rules.preset checks the name, and its error lists the presets.
    parser.add_argument("--rules", default="super-taki-2018", metavar="PRESET",
                        help="rules preset (default %(default)s; RULES.md describes each)")
    parser.add_argument("--flag", action="append", default=[], metavar="NAME=VALUE",
                        help="a rule flag, e.g. --flag voluntary_draw=true (repeatable)")


def _bot_check_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-bot-check", action="store_true",
                        help="do not check that every local bot starts and completes the "
                             "handshake before the first game; a bot that cannot start "
                             "then forfeits its games")


def _progress_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--progress-interval", type=float, default=10.0, metavar="SECONDS",
                        help="when standard error is not a terminal (a CI log), print a"
                             " progress line at most this often (default 10; 0: never)")


def _rating_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--anchor", default=None, metavar="BOT",
                        help="bot whose rating is fixed at --anchor-elo (default: the mean "
                             "rating is 1500)")
    parser.add_argument("--anchor-elo", type=float, default=1500.0, metavar="E")
    parser.add_argument("--prior", type=float, default=1.0, metavar="GAMES",
                        help="virtual drawn games of each bot against the field's centre "
                             "(default 1, which keeps an unbeaten bot's rating finite; "
                             "0: plain maximum likelihood)")
    parser.add_argument("--model", choices=RATING_MODELS, default=None,
                        help="the rating model (default: the league file's rating_model, "
                             f"else bradley-terry for heads-up tables and {MULTIPLAYER_MODEL} "
                             "for larger ones; docs/ratings.md)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="taki-referee",
        description="Referee Super Taki games between bots that speak protocol/PROTOCOL.md.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    match = sub.add_parser("match", help="play games between bots")
    match.add_argument("bots", nargs="+", metavar="BOT",
                       help='a bot command ("python bot.py"), NAME=COMMAND, or NAME=remote '
                            "for a bot that connects over TCP; 2 to 10 bots")
    match.add_argument("--games", type=int, default=None,
                       help="number of games (default: one per seat rotation; with --series,"
                            " one series per seating)")
    match.add_argument("--series", type=int, nargs="?", const=6, default=None, metavar="N",
                       help="play series of N games (default 6) scored with penalty points"
                            " (RULES.md R24): the bots keep their seats through a series,"
                            " the first move passes round, the lowest total wins")
    match.add_argument("--seed", type=int, default=None, help=SEED_HELP)
    _rules_args(match)
    _time_args(match)
    match.add_argument("--fault-policy", choices=("forfeit", "strikes"), default="forfeit")
    match.add_argument("--strikes", type=int, default=3,
                       help="with --fault-policy strikes: the strike that forfeits (default 3)")
    match.add_argument("--no-restart", action="store_true",
                       help="do not restart a bot that crashed for the next game")
    match.add_argument("--replay-dir", type=Path, default=None, help="write a replay per game")
    match.add_argument("--log-dir", type=Path, default=Path("logs"),
                       help="bot stderr logs (default ./logs)")
    match.add_argument("--json", action="store_true", help="print the results as JSON")
    _progress_arg(match)
    _bot_check_arg(match)
    add_remote_args(match)
    add_sandbox_args(match)

    league = sub.add_parser("league", help="run (or resume) a round-robin league")
    league.add_argument("file", type=Path, help="the league file (TOML)")
    league.add_argument("--db", type=Path, default=Path("results.sqlite"),
                        help="results database (default results.sqlite)")
    league.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    league.add_argument("--log-dir", type=Path, default=Path("logs"),
                        help="bot stderr logs (default ./logs)")
    league.add_argument("--workers", type=int, default=None, metavar="N",
                        help="play the games in N referee worker processes on this machine"
                             " (one unit of work each at a time); overrides [league] workers")
    league.add_argument("--dask", metavar="SCHEDULER", default=None,
                        help="play the games on the Dask cluster of this scheduler "
                             "(HOST:PORT, tcp://HOST:PORT or dask://HOST:PORT); "
                             "overrides [league] executor; needs the dask extra "
                             "(pip install -e '.[dask]')")
    _rating_args(league)
    _progress_arg(league)
    _bot_check_arg(league)
    add_remote_args(league)

    ratings = sub.add_parser("ratings", help="ratings from an existing results database")
    ratings.add_argument("db", type=Path)
    _rating_args(ratings)
    ratings.add_argument("--include-retired", action="store_true",
                         help="also show the bots that left the league file (their games"
                              " count in the ratings either way)")
    ratings.add_argument("--json", action="store_true")

    sprt = sub.add_parser(
        "sprt", help="SPRT: is NEW stronger than OLD? (exit 0 yes, 1 no or NEW forfeited more"
                     " than --max-forfeits games, 3 undecided)"
    )
    sprt.add_argument("new", metavar="NEW")
    sprt.add_argument("old", metavar="OLD")
    sprt.add_argument("--elo0", type=float, default=0.0)
    sprt.add_argument("--elo1", type=float, default=10.0)
    sprt.add_argument("--alpha", type=float, default=0.05)
    sprt.add_argument("--beta", type=float, default=0.05)
    sprt.add_argument("--max-games", type=int, default=2000)
    sprt.add_argument("--seed", type=int, default=None, help=SEED_HELP)
    sprt.add_argument("--concurrency", type=int, default=None)
    sprt.add_argument("--max-forfeits", type=int, default=None, metavar="N",
                      help="stop with exit status 1 as soon as NEW has forfeited more than N"
                           " games (default: no limit)")
    _rules_args(sprt)
    _time_args(sprt)
    sprt.add_argument("--log-dir", type=Path, default=Path("logs"),
                      help="bot stderr logs (default ./logs)")
    sprt.add_argument("--replay-dir", type=Path, default=None,
                      help="write the replays of the games NEW lost (with --replays all:"
                           " of every game)")
    sprt.add_argument("--replays", choices=("lost", "all"), default="lost",
                      help="which games --replay-dir keeps (default lost)")
    sprt.add_argument("--json", action="store_true")
    _progress_arg(sprt)
    _bot_check_arg(sprt)
    add_remote_args(sprt)
    add_sandbox_args(sprt)

    connect = sub.add_parser(
        "connect", help="play a local bot on a remote referee's seat (docs/remote.md)",
        description="Connect to a referee that listens for remote bots, authenticate with "
                    "the seat's token, start the bot and relay its conversation. Exit status "
                    "0 when the referee ends the session with shutdown, 2 for a mistake on "
                    "the command line, 1 otherwise.",
    )
    connect.add_argument("address", metavar="HOST:PORT", help="the referee's --listen address")
    connect.add_argument("--token", default=None,
                         help="the seat's token, from the referee's tokens file "
                              "(default: $TAKI_REFEREE_TOKEN)")
    connect.add_argument("--tls", action="store_true", help="connect with TLS")
    connect.add_argument("--ca", type=Path, default=None, metavar="FILE",
                         help="trust these CA certificates (PEM) instead of the system's; "
                              "implies --tls")
    connect.add_argument("--name", default=None,
                         help="the name sent in bot_hello (default: from the command)")
    connect.add_argument("--log", type=Path, default=None, metavar="FILE",
                         help="write the bot's stderr to FILE")
    connect.add_argument("--startup-ms", type=int, default=10_000,
                         help="limit for the bot's bot_hello once started (default 10000)")
    connect.add_argument("bot", nargs="*", metavar="BOT",
                         help="the bot's command line, after -- (or one quoted string)")

    check = sub.add_parser(
        "check", help="a compliance run: put bots through every situation of the protocol",
        description="Play scripted scenarios against each bot through the real protocol"
                    " and report each one passed or failed. Exit status 0 when every"
                    " scenario passes, 1 otherwise, 2 for a mistake on the command line.",
    )
    check.add_argument("bots", nargs="*", metavar="BOT",
                       help='a bot command ("python bot.py") or NAME=COMMAND')
    check.add_argument("--scenario", action="append", default=[], metavar="NAME",
                       help="run only this scenario (repeatable; --list shows them)")
    check.add_argument("--list", action="store_true", help="list the scenarios and exit")
    check.add_argument("--log-dir", type=Path, default=Path("logs"),
                       help="bot stderr logs (default ./logs)")
    check.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    check.add_argument("--slack", type=float, default=1.0, metavar="FACTOR",
                       help="multiply the fixed waits (a bot's exit after shutdown, error or"
                            " the end of its input; docs/check.md) by FACTOR, on top of the"
                            " host's load per CPU, which they always follow (default 1)")
    _time_args(check)
    add_sandbox_args(check)

    kit = sub.add_parser(
        "kit", help="copy a starter kit (a bot to fill in) for a language",
        description="Copy the starter kit of LANG to DIR: a bot that plays, with a"
                    " strategy to replace and a README. Without LANG, list the kits.",
    )
    kit.add_argument("language", nargs="?", metavar="LANG", help="python, java, rust, ...")
    kit.add_argument("directory", nargs="?", type=Path, metavar="DIR",
                     help="a new (or empty) directory for the kit")
    kit.add_argument("--list", action="store_true", help="list the kits and exit")

    replay = sub.add_parser("replay", help="work with replay files")
    replay_sub = replay.add_subparsers(dest="replay_command", required=True, metavar="ACTION")
    verify = replay_sub.add_parser("verify", help="re-play replays and check their results")
    verify.add_argument("files", type=Path, nargs="+")
    render = replay_sub.add_parser(
        "render", help="replays as self-contained HTML pages, all in one process")
    render.add_argument("files", type=Path, nargs="+", metavar="FILE")
    render.add_argument("-o", "--output", type=Path, default=None,
                        help="the folder of the pages (or, for one FILE, the page itself);"
                             " default: beside each replay, with .html")

    report = sub.add_parser("report", help="an HTML league report from a results database")
    report.add_argument("db", type=Path)
    report.add_argument("-o", "--output", type=Path, default=Path("report.html"),
                        help="the page to write (default report.html)")
    report.add_argument("--replays", action="store_true",
                        help="first render the page of every stored replay beside it, so"
                             " that the game list links each game's page")
    report.add_argument("--title", default=None,
                        help="the report's title (default: League report: DB)")
    report.add_argument("--points", type=int, default=20,
                        help="points of the rating-over-games chart (default 20)")
    add_competition_commands(sub)
    return parser


def add_remote_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("remote bots (NAME=remote; see docs/remote.md)")
    group.add_argument("--listen", metavar="HOST:PORT", default=None,
                       help="where remote bots connect (HOST defaults to 127.0.0.1; "
                            "[::1]:PORT for IPv6; port 0 picks a free one)")
    group.add_argument("--tokens", type=Path, metavar="FILE", default=None,
                       help="write each remote seat's token here (NAME TOKEN lines, mode 0600)")
    group.add_argument("--join-timeout", type=float, default=DEFAULT_JOIN_TIMEOUT_S,
                       metavar="SECONDS",
                       help="how long the games wait for a remote bot that is not "
                            "connected: the first game that needs it waits this long, later "
                            "ones forfeit it at once until it joins; waited once per absence "
                            f"(default {DEFAULT_JOIN_TIMEOUT_S:g})")
    group.add_argument("--tls-cert", type=Path, metavar="FILE", default=None,
                       help="serve TLS with this certificate chain (PEM)")
    group.add_argument("--tls-key", type=Path, metavar="FILE", default=None,
                       help="the private key of --tls-cert (PEM)")



def add_sandbox_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sandbox and limits (docs/sandbox.md)")
    group.add_argument("--sandbox", action="store_true",
                       help="run the local bots under bubblewrap: no network, no other"
                            " processes, only their own files to read")
    group.add_argument("--sandbox-bind", action="append", default=[], metavar="PATH",
                       help="one more path the sandboxed bots may read (repeatable)")
    group.add_argument("--memory-mb", type=int, metavar="MB",
                       help="memory of a bot process and all it starts (enforced)")
    group.add_argument("--pids", type=int, metavar="N",
                       help="processes a bot may run at once (enforced)")
    group.add_argument("--cpu-percent", type=int, metavar="P",
                       help="share of one CPU a bot process may use (enforced; 100 = one CPU)")
