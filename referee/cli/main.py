"""The ``taki-referee`` command: parse the arguments, run the command, and report a
user's mistake in one line.

Only what every run needs is imported at the top (``benchmarks/cli_startup.py``): each
command's modules, trio and rich are loaded once the arguments are known to be good.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from referee.cli.parser import build_parser
from referee.core import UserError, leaves

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: The commands that fit ratings of many bots in this process or in one it starts (the
#: server's rating history); their bots, sandboxed, get an environment of their own.
FITTING = ("ratings", "report", "serve", "finals")

#: Mistakes the user or the host must fix: reported in one line, exit status 2.
USER_ERRORS: tuple[type[Exception], ...] = (UserError,)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    bot_words = None
    if "connect" in words and "--" in words[words.index("connect"):]:
        # Everything after -- is the bot's command line, options included.
        cut = words.index("--", words.index("connect"))
        words, bot_words = words[:cut], words[cut + 1 :]
    args = parser.parse_args(words)
    if args.command in FITTING:
        # The fits' matrices (a thousand bots: 1,000 by 1,000) are too small for
        # OpenBLAS's threads, which spin for work: on a loaded machine they multiply
        # the CPU of a solve by seven. Set before NumPy loads (with the fits).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if bot_words is not None:
        args.bot = [*args.bot, *bot_words]
    try:
        return _run(args)
    except BaseException as exc:
        # Trio wraps what a task raised in an exception group; unwrap it so that a
        # user's mistake (a missing bot binary in a league or an SPRT run) is reported
        # like anywhere else instead of as a traceback with exit status 1.
        if leaves(exc, (KeyboardInterrupt,)):
            partial = getattr(args, "on_interrupt", None)
            if partial is not None:
                partial()  # what the interrupted command had done so far
            _say(f"[yellow]interrupted[/]: every bot process was stopped{_kept(args)}")
            return EXIT_INTERRUPTED
        mistakes = leaves(exc, USER_ERRORS)
        if not mistakes or leaves(exc) != mistakes:
            raise
        for message in dict.fromkeys(str(m) for m in mistakes):
            _say("[bold red]taki-referee:[/] ", message)
        return EXIT_USAGE


def _say(markup: str, text: str = "") -> None:
    """``markup`` then ``text`` (printed as it is) on standard error."""
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, soft_wrap=True).print(markup + escape(text), highlight=False)


class Terminated(KeyboardInterrupt):
    """SIGTERM, which the commands handle as they handle Ctrl-C: every bot process is
    stopped and what was stored stays."""


async def _until_terminated(command: Callable[..., Awaitable[int]], *args: object) -> int:
    """Run ``command``; a SIGTERM meanwhile cancels it and raises :class:`Terminated`."""
    import trio

    async with trio.open_nursery() as nursery:

        async def watch(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
            with trio.open_signal_receiver(signal.SIGTERM) as signals:
                task_status.started()
                async for _ in signals:
                    raise Terminated

        # Watching before the command starts: a SIGTERM during its first steps (before
        # its first checkpoint) is handled like any other, not the default way (death).
        await nursery.start(watch)
        code = await command(*args)
        nursery.cancel_scope.cancel()
    return code


def _kept(args: argparse.Namespace) -> str:
    """For an interrupted league: how many games its database holds, and how to go on."""
    if args.command != "league" or not Path(args.db).exists():
        return ""
    from referee.league import ResultStore, StoreError

    try:
        with ResultStore(args.db, readonly=True) as store:
            games = store.game_count()
    except StoreError:
        return ""
    return f"; {games} games are stored in {args.db}: run the same command again to resume"


def _run(args: argparse.Namespace) -> int:
    """Run the command the arguments name, importing only what it needs."""
    command = args.command
    if command in ("match", "league", "sprt"):
        import trio

        if command == "league":
            from referee.cli.league import run_league_command

            return trio.run(_until_terminated, run_league_command, args)
        from referee.cli.game_settings import rules, time_control

        if command == "match":
            from referee.cli.match import run_match_command as play
        else:
            from referee.cli.sprt import run_sprt_command as play
        return trio.run(_until_terminated, play, args, rules(args), time_control(args))
    if command == "check":
        import trio

        from referee.cli.check import run_check_command
        from referee.cli.game_settings import time_control

        return trio.run(_until_terminated, run_check_command, args, time_control(args))
    if command == "ratings":
        from referee.cli.league import ratings_command

        return ratings_command(args)
    if command == "connect":
        import trio

        from referee.cli.remote import run_connect_command

        return trio.run(run_connect_command, args)
    if command == "kit":
        from referee.cli.kit import kit_command

        return kit_command(args)
    if command == "serve":
        import trio

        from referee.cli.serve import run_serve_command

        return trio.run(_until_terminated, run_serve_command, args)
    if command == "finals":
        import trio

        from referee.cli.finals import run_finals_command

        return trio.run(_until_terminated, run_finals_command, args)
    if command == "participants":
        from referee.cli.participants import participants_command

        return participants_command(args)
    if command == "submit" and args.dry_run:
        from referee.cli.dry_run import dry_run_command

        return dry_run_command(args)
    if command == "submit":
        from referee.cli.submit import submit_command

        return submit_command(args)
    if command == "verify-season":
        from referee.cli.verify_season import verify_season_command

        return verify_season_command(args)
    if command == "report":
        from referee.cli.report import report_command

        return report_command(args)
    assert command == "replay", command
    from referee.cli.replays import render_command, verify_command

    return render_command(args) if args.replay_command == "render" else verify_command(args)


if __name__ == "__main__":
    sys.exit(main())
