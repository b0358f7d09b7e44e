"""Bots given on the command line (``COMMAND``, ``NAME=COMMAND``, ``NAME=remote``) and
the commands of bots: how they are split, named and started."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path

import attrs

from referee.config.errors import SettingsError
from referee.core import REMOTE, BotCommand, BotSpec, ResourceLimits

#: An interpreter name that, as the first word of a bot command, means the referee's
#: own Python (so ``python sample_bots/random_bot.py`` works without an activated venv).
PYTHON_NAMES = ("python", "python3")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")
#: Between a bot's name and its version in the name of an entrant: ``greedy@2``.
VERSION_MARK = "@"


def make_command(
    command: str,
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    limits: ResourceLimits | None = None,
) -> BotCommand:
    """A bot's command; ValueError for one that cannot be started (no program, a NUL
    character, an environment variable that cannot be set)."""
    if "\0" in command:
        raise ValueError("the command contains a NUL character (\\u0000)")
    problem = env_error(env or {})
    if problem is not None:
        raise ValueError(f"env: {problem}")
    cmd = BotCommand.parse(command, cwd=cwd, env=env, limits=limits)
    if cmd.argv[0] in PYTHON_NAMES:
        cmd = attrs.evolve(cmd, argv=(sys.executable, *cmd.argv[1:]))
    return cmd


def env_error(env: Mapping[str, str]) -> str | None:
    """What keeps ``env`` from being a process's environment variables, or None."""
    for name, value in env.items():
        if not name:
            return "a variable needs a name (found an empty one)"
        if "=" in name or "\0" in name:
            return f"variable name {name!r} cannot contain '=' or a NUL character (\\u0000)"
        if "\0" in value:
            return f"the value of {name} contains a NUL character (\\u0000)"
    return None


def parse_bot_arg(text: str, index: int, origin: str | None = None) -> BotSpec:
    """A bot from the command line: ``COMMAND``, ``NAME=COMMAND``, or ``NAME=remote`` for
    a remote seat. ``origin`` says where it was given (default ``argument N``)."""
    origin = origin or f"argument {index + 1}"
    name, sep, command = text.partition("=")
    if not sep or not NAME_PATTERN.match(name) or " " in name:
        name, command = "", text
    if command.strip() == REMOTE:
        if not name:
            raise SettingsError(
                f"bot {index + 1}: a remote seat needs a name: NAME=remote"
                " (use ./remote for an executable of that name)"
            )
        return BotSpec(name, None, origin)
    try:
        cmd = make_command(command)
    except ValueError as exc:
        raise SettingsError(f"bot {index + 1}: {exc}") from None
    program = Path(cmd.argv[0]).name
    if len(cmd.argv) == 1 and (cmd.argv[0] == sys.executable or INTERPRETERS.match(program)):
        # "match python my_bot.py": the shell split one bot's command into two.
        raise SettingsError(
            f"bot {index + 1}: {command.strip()!r} alone is an interpreter with no program"
            f" to run; each bot is one argument: quote its command, e.g."
            f" \"{command.strip()} my_bot.py\""
        )
    if not name:
        name = default_name(cmd, index)
    return BotSpec(name, cmd, origin)


#: Programs that run a script: a bot started with one is named after its script.
INTERPRETERS = re.compile(r"^(python[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|java|bash|sh)$")


def default_name(cmd: BotCommand, index: int) -> str:
    """The script's name for ``python bot.py`` or ``node js/bot.js`` (then the folder's
    name when the script is called bot or main), else the executable's name."""
    words = [w for w in cmd.argv if not w.startswith("-")]
    program = Path(cmd.argv[0])
    target = program
    if (cmd.argv[0] == sys.executable or INTERPRETERS.match(program.name)) and len(words) > 1:
        target = Path(words[1])
    stem = target.stem
    if stem in ("bot", "main", "index") and target.parent.name:
        stem = target.parent.name
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", stem) or f"bot{index + 1}"


def unique_names(bots: list[BotSpec]) -> list[BotSpec]:
    """Give repeated names a suffix (``random``, ``random-2``)."""
    seen: dict[str, int] = {}
    out = []
    for bot in bots:
        n = seen.get(bot.name, 0) + 1
        seen[bot.name] = n
        out.append(bot if n == 1 else attrs.evolve(bot, name=f"{bot.name}-{n}"))
    return out
