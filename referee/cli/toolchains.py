"""Which toolchains a sandboxed bot or build finds: asked of the sandbox itself, by a
shell started in it as a build is, so that ``serve`` can say at start what the builds
of its participants will have (docs/competition.md, "The build environment")."""

from __future__ import annotations

import math
import sys
from typing import Final

import trio

from referee.core import BotCommand, BotStartError, Sandbox
from referee.shell import SandboxError, open_bot_process

__all__ = ["TOOLS", "describe_toolchains", "sandbox_toolchains"]

#: The programs the starter kits build and run with, in the order they are listed.
TOOLS: Final = ("node", "npm", "java", "javac", "go", "cargo", "rustc", "g++", "make",
                "mcs", "mono", "python3")
#: How long the probe may take (a sandbox starts in well under a second).
PROBE_SECONDS: Final = 30

_SCRIPT: Final = 'for t in "$@"; do p=$(command -v "$t") && echo "$t $p"; done; exit 0'


async def sandbox_toolchains() -> dict[str, str]:
    """Each program of :data:`TOOLS` that a shell in the sandbox finds on its ``PATH``,
    with its path there. SandboxError when there is no sandbox."""
    command = BotCommand(("/bin/sh", "-c", _SCRIPT, "probe", *TOOLS), sandbox=Sandbox())
    found = b""
    try:
        async with open_bot_process(command) as process:
            await process.close_input()
            with trio.move_on_after(PROBE_SECONDS):
                while chunk := await process.receive_some(1 << 16, deadline=math.inf):
                    found += chunk
    except BotStartError as exc:
        raise SandboxError(f"the sandbox cannot start a shell: {exc}") from None
    tools = {}
    for line in found.decode("utf-8", "replace").splitlines():
        name, _, path = line.partition(" ")
        if name in TOOLS and path:
            tools[name] = path
    return tools


def describe_toolchains(tools: dict[str, str]) -> str:
    """One line: what a build and a bot find, the referee's Python first."""
    version = ".".join(map(str, sys.version_info[:2]))
    seen = [f"python (the referee's {version}, with msgpack and taki_protocol)"]
    seen += [f"{name} ({path})" for name, path in tools.items()]
    missing = [name for name in TOOLS if name not in tools]
    line = "the sandbox's builds and bots find: " + ", ".join(seen)
    if missing:
        line += f"; not there: {', '.join(missing)}"
    return line
