"""What a bot is, as plain values: its name, the command that starts it, its limits and
its sandbox. The league file and the command line build these (``referee.config``); the
trio shell starts bots from them (``referee.shell``), and the league's worker processes
and Dask workers receive them as they are (they pickle, every field included). No I/O.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

__all__ = [
    "REMOTE", "BotCommand", "BotSpec", "Environment", "HardLimits", "ResourceLimits", "Sandbox",
]

#: How a remote bot is shown where a local one shows its command.
REMOTE = "remote"


@attrs.frozen
class HardLimits:
    """``--memory-mb``, ``--pids``, ``--cpu-percent`` (None: no limit)."""

    memory_mb: int | None = attrs.field(default=None, validator=attrs.validators.optional(
        attrs.validators.ge(1)))
    pids: int | None = attrs.field(default=None, validator=attrs.validators.optional(
        attrs.validators.ge(1)))
    #: Percent of one CPU (200: two CPUs' worth).
    cpu_percent: int | None = attrs.field(default=None, validator=attrs.validators.optional(
        attrs.validators.ge(1)))
    #: Not a limit of its own (no cgroup is made for it): how much lower the CPU weight
    #: of the bot's cgroup is, when it has one with the cpu controller.
    niceness: int | None = None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.memory_mb, self.pids, self.cpu_percent))

    def describe(self) -> str:
        parts = []
        if self.memory_mb is not None:
            parts.append(f"memory {self.memory_mb} MiB")
        if self.pids is not None:
            parts.append(f"{self.pids} processes")
        if self.cpu_percent is not None:
            parts.append(f"{self.cpu_percent}% CPU")
        return ", ".join(parts) or "none"


@attrs.frozen
class Sandbox:
    """That a bot runs sandboxed, and what it may see besides the defaults."""

    #: More paths the bot may read (``sandbox_bind``, ``--sandbox-bind``).
    binds: tuple[str, ...] = ()
    #: Size of the bot's private /tmp.
    tmp_mb: int = attrs.field(default=64, validator=attrs.validators.ge(1))


def _check_optional_positive(
    _instance: Any, attribute: attrs.Attribute[Any], value: object
) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an int or None, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{attribute.name} must be positive, got {value}")


@attrs.frozen
class ResourceLimits:
    """Per-process resource limits applied to the bot (None = inherit).

    ``address_space_mb`` limits virtual memory (``RLIMIT_AS``). Runtimes that
    reserve large address ranges up front (V8/Node.js, the JVM, Go) may fail
    to start under a tight address-space limit even though they use little
    real memory.

    ``cpu_seconds`` limits CPU time (``RLIMIT_CPU``): the bot receives
    ``SIGXCPU`` when it is reached and ``SIGKILL`` one second later.

    ``niceness`` lowers the bot's CPU priority below the referee's by that many nice
    levels (1-19), everything it starts included: its nice value, its session's
    autogroup, and the CPU weight of its cgroup when it has a CPU cgroup of its own
    (:mod:`referee.shell.limits`). The referee does it for work that must never take a
    CPU from a timed game (a competition's builds and checks).

    ``file_size_mb`` limits the size of any file the bot writes
    (``RLIMIT_FSIZE``), and ``open_files`` the number of descriptors it may
    hold (``RLIMIT_NOFILE``; interpreters need a few dozen to start).

    A limit above the referee's own hard limit is clamped to it, since an
    unprivileged process cannot raise a hard limit.
    """

    address_space_mb: int | None = attrs.field(default=None, validator=_check_optional_positive)
    cpu_seconds: int | None = attrs.field(default=None, validator=_check_optional_positive)
    file_size_mb: int | None = attrs.field(default=None, validator=_check_optional_positive)
    open_files: int | None = attrs.field(default=None, validator=_check_optional_positive)
    #: Enforced by cgroups where the host allows (:mod:`referee.shell.limits`): the bot's
    #: memory with all it starts, its number of processes, its share of a CPU in percent.
    memory_mb: int | None = attrs.field(default=None, validator=_check_optional_positive)
    pids: int | None = attrs.field(default=None, validator=_check_optional_positive)
    cpu_percent: int | None = attrs.field(default=None, validator=_check_optional_positive)
    niceness: int | None = attrs.field(default=None, validator=attrs.validators.optional(
        [attrs.validators.ge(1), attrs.validators.le(19)]))

    def hard(self) -> HardLimits:
        """The limits that :mod:`referee.shell.limits` enforces."""
        return HardLimits(self.memory_mb, self.pids, self.cpu_percent, self.niceness)



def _to_argv(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError("argv must be a sequence of strings; use BotCommand.parse for a string")
    argv = tuple(value)
    if not argv or not argv[0]:
        raise ValueError("argv must name an executable")
    for arg in argv:
        if not isinstance(arg, str):
            raise TypeError(f"argv items must be str, got {type(arg).__name__}")
    return argv


def _to_cwd(value: str | os.PathLike[str] | None) -> str | None:
    return None if value is None else os.fspath(value)


class Environment(Mapping[str, str]):
    """Environment variables of a bot: read-only, hashable, and picklable (a bot's command
    travels to worker processes and Dask workers as it is)."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, str]) -> None:
        env = dict(items)
        for key, val in env.items():
            if not isinstance(key, str) or not isinstance(val, str):
                raise TypeError("env keys and values must be str")
        self._items = env

    def __getitem__(self, key: str) -> str:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._items == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"Environment({self._items!r})"

    def __reduce__(self) -> tuple[type[Environment], tuple[dict[str, str]]]:
        return (Environment, (self._items,))


def _to_env(value: Mapping[str, str] | None) -> Environment | None:
    if value is None or isinstance(value, Environment):
        return value
    return Environment(value)


@attrs.frozen
class BotCommand:
    """How to start a bot.

    ``env`` holds extra variables merged over the referee's own environment
    (it does not replace it). ``cwd`` is the bot's working directory; a
    relative executable path containing a slash is resolved against it.
    """

    argv: tuple[str, ...] = attrs.field(converter=_to_argv)
    cwd: str | None = attrs.field(default=None, converter=_to_cwd)
    env: Environment | None = attrs.field(default=None, converter=_to_env)
    limits: ResourceLimits = attrs.field(factory=ResourceLimits)
    #: Run the bot under bubblewrap (:mod:`referee.shell.sandbox`); None: as it is.
    sandbox: Sandbox | None = None

    @classmethod
    def parse(
        cls,
        command: str,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        limits: ResourceLimits | None = None,
    ) -> BotCommand:
        """Build a command from a shell-like string (split with :func:`shlex.split`).

        No shell is involved: pipes, redirections and variable expansion are
        not supported.
        """
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ValueError(f"cannot parse bot command {command!r}: {exc}") from exc
        if not argv:
            raise ValueError("empty bot command")
        return cls(argv, cwd, env, limits if limits is not None else ResourceLimits())

    @property
    def display(self) -> str:
        """The command as it would be typed in a shell."""
        return shlex.join(self.argv)

    def child_env(self) -> dict[str, str] | None:
        """The bot's full environment, or None to inherit the referee's unchanged."""
        if self.env is None:
            return None
        return {**os.environ, **self.env}


@attrs.frozen
class BotSpec:
    """A named bot: how to start it, or None for a remote bot, which connects to the
    referee over TCP (docs/remote.md)."""

    name: str
    command: BotCommand | None
    #: Where the bot was given, for messages: ``league.toml:14`` (its ``[[bots]]``
    #: entry), or ``NEW``, ``OLD``, ``argument 2`` on the command line. Not part of
    #: the bot's identity.
    origin: str | None = attrs.field(default=None, eq=False)

    @property
    def remote(self) -> bool:
        return self.command is None

    @property
    def display(self) -> str:
        return REMOTE if self.command is None else self.command.display

    def local_command(self) -> BotCommand:
        """The command of a local bot; ValueError for a remote one."""
        if self.command is None:
            raise ValueError(f"bot {self.name!r} is remote: it has no command to start")
        return self.command
