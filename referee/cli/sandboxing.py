"""The sandbox and limit options that ``match`` and ``sprt`` share (``--sandbox``,
``--sandbox-bind PATH``, ``--memory-mb``, ``--pids``, ``--cpu-percent``, declared in
``referee.cli.parser``): applied to the bots, and refused when the host cannot honour
them."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import attrs

from referee.core import BotSpec, Sandbox, UsageError
from referee.shell import LimitError, SandboxError, containment, limit_backend, require_sandbox

#: Said at start when root runs bots with limits outside the sandbox.
ROOT_WARNING = ("limits: bots run as root without --sandbox can escape their limits (and"
                " write what root can): run bots you did not write with --sandbox")


def sandboxed_bots(args: argparse.Namespace, bots: Sequence[BotSpec]) -> list[BotSpec]:
    """The bots with the options applied to every local one; UsageError for options
    this host cannot honour (no bwrap, a limit its backend cannot enforce), before any
    game. Says on stderr which sandbox and limit backend are in force."""
    for flag, value in (("--memory-mb", args.memory_mb), ("--pids", args.pids),
                        ("--cpu-percent", args.cpu_percent)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be at least 1, got {value}")
    if args.sandbox_bind and not args.sandbox:
        raise UsageError("--sandbox-bind needs --sandbox")
    sandbox = Sandbox(binds=tuple(args.sandbox_bind)) if args.sandbox else None
    out = []
    for bot in bots:
        if bot.command is None:
            out.append(bot)
            continue
        given = {key: getattr(args, key) for key in ("memory_mb", "pids", "cpu_percent")}
        limits = attrs.evolve(
            bot.command.limits, **{k: v for k, v in given.items() if v is not None}
        )
        command = attrs.evolve(bot.command, limits=limits,
                               sandbox=sandbox if sandbox is not None else bot.command.sandbox)
        out.append(attrs.evolve(bot, command=command))
    announce(out)
    return out


def announce(bots: Sequence[BotSpec]) -> None:
    """UsageError when the host cannot run the bots as asked; else one line on stderr
    naming the sandbox and the limit backend in force (nothing without either), after
    one that says that processes are not contained when unsandboxed bots cannot be
    (:func:`~referee.shell.sandbox.containment`), and one that says that bots run by
    root outside the sandbox can escape their limits."""
    commands = [b.command for b in bots if b.command is not None]
    sandboxed = any(c.sandbox is not None for c in commands)
    limited = [c.limits.hard() for c in commands if c.limits.hard()]
    if any(c.sandbox is None for c in commands):
        contained = containment()  # probed here, before any bot's clock runs
        if not contained.contained:
            print(contained.describe(), file=sys.stderr)
        if os.geteuid() == 0 and any(c.sandbox is None and c.limits.hard() for c in commands):
            print(ROOT_WARNING, file=sys.stderr)
    try:
        if sandboxed:
            require_sandbox()
        backend = limit_backend()
        for hard in limited:
            backend.check(hard)
    except (SandboxError, LimitError) as exc:
        raise UsageError(str(exc)) from None
    if sandboxed or limited:
        what = "bubblewrap" if sandboxed else "none"
        print(f"sandbox: {what}; limits: {backend.name}", file=sys.stderr)
