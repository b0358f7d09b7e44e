"""Remote bots on the command line: the remote seats that the ``--listen`` options of
``match``, ``league`` and ``sprt`` open (declared in ``referee.cli.parser``), and
``taki-referee connect``."""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import shlex
import sys
from collections.abc import AsyncIterator, Sequence

from referee.config import default_name, make_command
from referee.core import BotSpec, UsageError
from referee.shell import (
    RemoteSeats,
    RemoteSetupError,
    format_address,
    open_remote_seats,
    parse_address,
    server_tls_context,
)

#: Where ``connect`` finds the token when ``--token`` is not given.
TOKEN_VARIABLE = "TAKI_REFEREE_TOKEN"

log = logging.getLogger("referee.shell.remote")
connect_log = logging.getLogger("referee.shell.connect")


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time of each message."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def log_to_stderr(prefix: str) -> None:
    """Show the referee's INFO messages on stderr, each line after ``prefix``."""
    logger = logging.getLogger("referee")
    for handler in list(logger.handlers):
        if isinstance(handler, _StderrHandler):
            logger.removeHandler(handler)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter(f"{prefix}: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


@contextlib.asynccontextmanager
async def remote_seats(
    args: argparse.Namespace, bots: Sequence[BotSpec]
) -> AsyncIterator[RemoteSeats | None]:
    """The remote seats of the command's remote bots (None when it has none), open
    for the duration of the run."""
    names = [b.name for b in bots if b.remote]
    given = [flag for flag, value in (("--listen", args.listen), ("--tokens", args.tokens),
                                      ("--tls-cert", args.tls_cert), ("--tls-key", args.tls_key))
             if value is not None]
    if not names:
        if given:
            raise UsageError(f"{', '.join(given)}: only for remote bots (NAME=remote),"
                             " and there are none")
        yield None
        return
    which = ", ".join(names)
    if args.listen is None or args.tokens is None:
        raise UsageError(f"remote bot(s) {which}: give --listen HOST:PORT for them to connect"
                         " to and --tokens FILE for their tokens")
    if not (math.isfinite(args.join_timeout) and args.join_timeout > 0):
        raise UsageError(f"--join-timeout must be a positive number of seconds,"
                         f" not {args.join_timeout}")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together")
    try:
        listen = parse_address(args.listen)
        tls = None
        if args.tls_cert is not None:
            tls = server_tls_context(args.tls_cert, args.tls_key)
    except RemoteSetupError as exc:
        raise UsageError(str(exc)) from None
    log_to_stderr("taki-referee")
    async with open_remote_seats(names, listen, tokens_path=args.tokens,
                                 join_timeout_s=args.join_timeout, tls=tls) as seats:
        host, port = seats.addresses[0]
        if host in ("0.0.0.0", "::"):  # every interface: the bots know which address
            host = "HOST"
        tls_flag = " --tls" if tls is not None else ""
        log.info("a remote bot joins with: taki-referee connect %s%s --token TOKEN -- BOT COMMAND",
                 format_address(host, port), tls_flag)
        yield seats


async def run_connect_command(args: argparse.Namespace) -> int:
    from referee.shell import ConnectError, client_tls_context, connect_bot

    token = args.token if args.token is not None else os.environ.get(TOKEN_VARIABLE)
    if not token:
        raise UsageError(f"give the seat's token with --token TOKEN (or in ${TOKEN_VARIABLE})")
    words = list(args.bot)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError("give the bot's command after --")
    try:
        address = parse_address(args.address)
        command = make_command(words[0] if len(words) == 1 else shlex.join(words))
    except (RemoteSetupError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if args.startup_ms < 1:
        raise UsageError("--startup-ms must be positive")
    name = args.name if args.name is not None else default_name(command, 0)
    log_to_stderr("taki-referee connect")
    try:
        tls = client_tls_context(args.ca) if args.tls or args.ca is not None else None
        ended = await connect_bot(address, token, command, name=name, tls=tls,
                                  stderr_path=args.log, startup_timeout_s=args.startup_ms / 1000)
    except ConnectError as exc:
        connect_log.error("%s", exc)
        return 1
    connect_log.info("done: %s", ended)
    return 0
