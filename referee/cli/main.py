"""The ``taki-referee`` command."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import trio
from rich.console import Console
from rich.markup import escape

from referee import __version__
from referee.cli.remote import add_remote_args
from referee.cli.sandboxing import add_sandbox_args
from referee.config.settings import rule_flag_error
from referee.core.clock import TimeControl
from referee.core.errors import UsageError, UserError
from referee.league.store import ResultStore, StoreError
from referee.ratings.leaderboard import MULTIPLAYER_MODEL, RATING_MODELS
from referee.rules import PRESETS, Rules

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
SEED_HELP = (
    "master seed the deals come from (default: a fresh one from the operating system,"
    " printed and in --json, so that --seed repeats the run)"
)


#: Mistakes the user or the host must fix: reported in one line, exit status 2.
USER_ERRORS: tuple[type[Exception], ...] = (UserError,)


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


def _time_control(args: argparse.Namespace) -> TimeControl:
    try:
        return TimeControl(
            move_ms=args.move_ms,
            bank_ms=args.bank_ms,
            increment_ms=args.increment_ms,
            reaction_ms=args.reaction_ms,
            startup_ms=args.startup_ms,
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad time control: {exc}") from None


def _rules_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="super-taki-2018", choices=PRESETS,
                        help="rules preset (default super-taki-2018)")
    parser.add_argument("--flag", action="append", default=[], metavar="NAME=VALUE",
                        help="a rule flag, e.g. --flag voluntary_draw=true (repeatable)")


def _rules(args: argparse.Namespace) -> Rules:
    flags: dict[str, Any] = {}
    for item in args.flag:
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--flag needs NAME=VALUE, got {item!r}")
        try:
            flags[name] = json.loads(value)
        except json.JSONDecodeError:
            raise UsageError(f"--flag {name}: {value!r} is not a JSON value") from None
        problem = rule_flag_error(name, flags[name])
        if problem is not None:
            raise UsageError(f"--flag {name}: {problem}")
    try:
        return Rules.preset(args.rules, **flags)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad rules: {exc}") from None


def _bot_check_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-bot-check", action="store_true",
                        help="do not check that every local bot starts and completes the "
                             "handshake before the first game; a bot that cannot start "
                             "then forfeits its games")


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
                       help="number of games (default: one per seat rotation)")
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
    league.add_argument("--dask", metavar="SCHEDULER", default=None,
                        help="play the games on the Dask cluster of this scheduler "
                             "(HOST:PORT, tcp://HOST:PORT or dask://HOST:PORT); "
                             "overrides [league] executor; needs the dask extra "
                             "(pip install -e '.[dask]')")
    _rating_args(league)
    _bot_check_arg(league)
    add_remote_args(league)

    ratings = sub.add_parser("ratings", help="ratings from an existing results database")
    ratings.add_argument("db", type=Path)
    _rating_args(ratings)
    ratings.add_argument("--json", action="store_true")

    sprt = sub.add_parser(
        "sprt", help="SPRT: is NEW stronger than OLD? (exit 0 yes, 1 no, 3 undecided)"
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
    _rules_args(sprt)
    _time_args(sprt)
    sprt.add_argument("--log-dir", type=Path, default=Path("logs"))
    sprt.add_argument("--json", action="store_true")
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

    replay = sub.add_parser("replay", help="work with replay files")
    replay_sub = replay.add_subparsers(dest="replay_command", required=True, metavar="ACTION")
    verify = replay_sub.add_parser("verify", help="re-play replays and check their results")
    verify.add_argument("files", type=Path, nargs="+")
    render = replay_sub.add_parser("render", help="a replay as a self-contained HTML page")
    render.add_argument("file", type=Path)
    render.add_argument("-o", "--output", type=Path, default=None,
                        help="the page to write (default: FILE with .html)")

    report = sub.add_parser("report", help="an HTML league report from a results database")
    report.add_argument("db", type=Path)
    report.add_argument("-o", "--output", type=Path, default=Path("report.html"),
                        help="the page to write (default report.html)")
    report.add_argument("--points", type=int, default=20,
                        help="points of the rating-over-games chart (default 20)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    bot_words = None
    if "connect" in words and "--" in words[words.index("connect"):]:
        # Everything after -- is the bot's command line, options included.
        cut = words.index("--", words.index("connect"))
        words, bot_words = words[:cut], words[cut + 1 :]
    args = parser.parse_args(words)
    if bot_words is not None:
        args.bot = [*args.bot, *bot_words]
    err = Console(stderr=True, soft_wrap=True)
    try:
        return _run(args)
    except BaseException as exc:
        # Trio wraps what a task raised in an exception group; unwrap it so that a
        # user's mistake (a missing bot binary in a league or an SPRT run) is reported
        # like anywhere else instead of as a traceback with exit status 1.
        if _leaves(exc, (KeyboardInterrupt,)):
            err.print(f"[yellow]interrupted[/]: every bot process was stopped{_kept(args)}",
                      highlight=False)
            return EXIT_INTERRUPTED
        mistakes = _leaves(exc, USER_ERRORS)
        if not mistakes or _leaves(exc, (BaseException,)) != mistakes:
            raise
        for message in dict.fromkeys(str(m) for m in mistakes):
            err.print(f"[bold red]taki-referee:[/] {escape(message)}", highlight=False)
        return EXIT_USAGE


class Terminated(KeyboardInterrupt):
    """SIGTERM, which the commands handle as they handle Ctrl-C: every bot process is
    stopped and what was stored stays."""


async def _until_terminated(command: Callable[..., Awaitable[int]], *args: object) -> int:
    """Run ``command``; a SIGTERM meanwhile cancels it and raises :class:`Terminated`."""
    async with trio.open_nursery() as nursery:

        async def watch() -> None:
            with trio.open_signal_receiver(signal.SIGTERM) as signals:
                async for _ in signals:
                    raise Terminated

        nursery.start_soon(watch)
        code = await command(*args)
        nursery.cancel_scope.cancel()
    return code


def _kept(args: argparse.Namespace) -> str:
    """For an interrupted league: how many games its database holds, and how to go on."""
    if args.command != "league" or not Path(args.db).exists():
        return ""
    try:
        with ResultStore(args.db, readonly=True) as store:
            games = store.game_count()
    except StoreError:
        return ""
    return f"; {games} games are stored in {args.db}: run the same command again to resume"


def _leaves(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> list[BaseException]:
    """The exceptions of the given kinds in ``exc``, looking inside exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner, kinds)]
    return [exc] if isinstance(exc, kinds) else []


def _run(args: argparse.Namespace) -> int:
    if args.command == "match":
        from referee.cli.match import run_match_command

        return trio.run(_until_terminated, run_match_command, args, _rules(args),
                        _time_control(args))
    if args.command == "league":
        from referee.cli.league import run_league_command

        return trio.run(_until_terminated, run_league_command, args)
    if args.command == "ratings":
        from referee.cli.league import ratings_command

        return ratings_command(args)
    if args.command == "sprt":
        from referee.cli.sprt import run_sprt_command

        return trio.run(_until_terminated, run_sprt_command, args, _rules(args),
                        _time_control(args))
    if args.command == "connect":
        from referee.cli.remote import run_connect_command

        return trio.run(run_connect_command, args)
    if args.command == "report":
        from referee.present.report import report_command

        return report_command(args)
    assert args.command == "replay", args.command
    if args.replay_command == "render":
        from referee.present.render import render_command

        return render_command(args)
    return _replay_verify(args)


def _replay_verify(args: argparse.Namespace) -> int:
    from referee.core.replay import Replay, ReplayError, verify

    out = Console(soft_wrap=True)
    failures = 0
    for path in args.files:
        # Each file on its own: whatever one holds, the next ones are still checked.
        try:
            result = verify(Replay.load(path))
        except ReplayError as exc:
            problem = str(exc)
        except Exception as exc:  # a replay that the checks of Replay.load let through
            problem = f"unexpected {type(exc).__name__}: {exc}"
        else:
            winner = "no winner" if result.winner is None else f"seat {result.winner} wins"
            out.print(f"[green]ok[/]   {escape(str(path))}: {winner} after {result.actions}"
                      " actions", highlight=False)
            continue
        failures += 1
        out.print(f"[red]FAIL[/] {escape(str(path))}: {escape(problem)}", highlight=False)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
