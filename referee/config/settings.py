"""League files in TOML (bots given on the command line: ``referee.config.bot_commands``).

A bad setting raises :class:`SettingsError` naming the file, the line and the key, so a
user never has to guess what the referee did not like.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any, Literal, TypeAlias, get_args

import attrs

from referee.config.bot_commands import NAME_PATTERN, VERSION_MARK, env_error, make_command
from referee.config.errors import SettingsError
from referee.config.fields import Fail, build, read_fields, read_value, unknown_key
from referee.config.rule_flags import read_rules
from referee.config.toml_lines import KeyLocator, read_toml_file
from referee.core import (
    BotCommand,
    BotSpec,
    MatchSettings,
    ResourceLimits,
    Sandbox,
    TimeControl,
    at_least,
    between,
)
from referee.ratings import RatingModel
from referee.rules import PRESETS, RULES_REVISION, DealError, Rules

#: ``[league] executor``: "local", or a Dask scheduler as ``dask://HOST:PORT``.
DASK_EXECUTOR = re.compile(r"^dask://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})$")


def directory_error(path: Path) -> str | None:
    """What keeps ``path`` from being used as a directory (and created, with its
    parents, when missing), or None: a file or a broken symbolic link in its place or in
    the place of one of its parents."""
    if "\0" in str(path):
        return "the path contains a NUL character (\\u0000)"
    for place in (path, *path.parents):
        try:
            if place.is_dir():
                return None
            if place.is_symlink():
                what = "a broken symbolic link"
            elif place.exists():
                what = "a file, not a directory" if place.is_file() else "not a directory"
            else:
                continue
        except OSError as exc:
            return f"cannot reach {place}: {exc.strerror}"
        return f"it is {what}" if place == path else f"{place} is {what}"
    return None


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, which a container or
    ``taskset`` may narrow), else the machine's count: the default concurrency."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no sched_getaffinity on this platform
        return os.cpu_count() or 1


# --------------------------------------------------------------------- leagues


#: ``[league] format``: single games, or series of games with penalty points (R24).
LeagueFormat: TypeAlias = Literal["single", "series"]
LEAGUE_FORMATS: tuple[LeagueFormat, ...] = get_args(LeagueFormat)


def _executor_check(_instance: Any, _attribute: attrs.Attribute[Any], value: Any) -> None:
    problem = executor_error(value)
    if problem is not None:
        raise ValueError(problem)


@attrs.frozen
class LeagueConfig:
    """A league file, read. The fields set from ``[league]`` are its keys: their kinds,
    bounds and defaults are read from here and from :class:`MatchSettings`
    (:mod:`referee.config.fields`)."""

    path: Path
    bots: tuple[BotSpec, ...]
    #: How the games are refereed: ``[league]``'s keys of the match settings, the rules
    #: (``[league] rules`` and ``[rules]``) and the time control (``[time]``). Its
    #: ``master_seed`` and ``log_dir`` are the run's (``referee.league.runner``).
    match: MatchSettings = attrs.field(factory=MatchSettings)
    table_size: int = attrs.field(default=2, validator=between(2, 10))
    deals: int = attrs.field(default=6, validator=at_least(1))
    #: The master seed of the deals; None: the one the league's database holds, which
    #: is a fresh one from when the database was created (``referee.league.runner``).
    seed: int | None = None
    concurrency: int = attrs.field(factory=available_cpus, validator=at_least(1))
    #: Where the games are played: "local" or "dask://HOST:PORT".
    executor: str = attrs.field(default="local", validator=_executor_check)
    #: The most deals one unit of work (one set of bot processes) plays; None: sized
    #: from ``concurrency`` (``referee.league.runner.deals_per_unit``).
    deals_per_process: int | None = attrs.field(default=None, validator=at_least(1))
    #: "single": every game is rated on its own; "series": the games are played in
    #: series of ``series_games`` (R24), and the series are rated.
    format: LeagueFormat = "single"
    series_games: int = attrs.field(default=6, validator=at_least(1))

    #: Referee worker processes that play the units (``referee.league.pool_executor``);
    #: None: the games are played in the referee's own process.
    workers: int | None = attrs.field(default=None, validator=at_least(1))
    #: The model of the league's ratings; None: the default of its table size
    #: (``referee.ratings.leaderboard.default_model``).
    rating_model: RatingModel | None = None

    @property
    def series_length(self) -> int | None:
        """The games of a series, or None for a league of single games."""
        return self.series_games if self.format == "series" else None

    def identity(self) -> str:
        """What decides what a game of the league means, which must not change between
        two runs into the same database. The bots and the number of deals are not in it:
        a league grows (docs/leagues.md, "Growing a league")."""
        series = "" if self.series_length is None else (
            f"format=series;series_games={self.series_games};")
        return (
            f"table_size={self.table_size};seed={self.seed};{series}"
            f"rules={sorted(self.match.rules.to_wire().items())};rules_revision={RULES_REVISION}"
        )


#: The sections of a league file.
SECTIONS = ("league", "time", "rules", "bots")
#: ``[league]`` keys that are not fields of :class:`LeagueConfig` as they are written.
_LEAGUE_EXTRA = ("rules", "sandbox", "sandbox_bind")
#: Fields of :class:`LeagueConfig` that no ``[league]`` key sets.
_NOT_LEAGUE_KEYS = ("path", "bots")
#: Fields of :class:`MatchSettings` that no ``[league]`` key sets: the rules and the
#: time control have sections of their own; the replays kept, the logs and the master
#: seed are a run's.
_NOT_MATCH_KEYS = ("rules", "time", "replays_lost_by", "log_dir", "empty_logs", "master_seed")
#: Keys of a ``[[bots]]`` table.
_BOT_KEYS = {
    "name", "version", "command", "remote", "cwd", "env", "limits", "sandbox", "sandbox_bind",
}
#: What a remote bot has none of.
_LOCAL_ONLY = ("command", "cwd", "env", "limits", "sandbox", "sandbox_bind")


def executor_error(value: object) -> str | None:
    """What is wrong with an ``executor`` setting, or None when it is usable."""
    usage = 'must be "local" or "dask://HOST:PORT" (a Dask scheduler)'
    if not isinstance(value, str):
        return f"{usage}, not {value!r}"
    if value == "local":
        return None
    match = DASK_EXECUTOR.match(value)
    if match is None:
        return f"{usage}, not {value!r}"
    if not 1 <= int(match.group(2)) <= 65535:
        return f"port {match.group(2)} is not between 1 and 65535"
    return None


def load_league(path: str | Path) -> LeagueConfig:
    path = Path(path)
    text, data = read_toml_file(path, "league file")
    return _parse_league(path, data, KeyLocator(text))


@attrs.frozen
class _Place:
    """Where a league file's problems are: its path and the lines of its keys."""

    path: Path
    where: KeyLocator

    def at(self, section: str, key: str | None = None, index: int = 0) -> str:
        line = self.where.line_of(section, key, index)
        return f"{self.path}:{line}" if line else str(self.path)

    def error(
        self, section: str, key: str | None, message: str, index: int = 0
    ) -> SettingsError:
        label = f"[[bots]] #{index + 1}" if section == "bots" else f"[{section}]"
        label += f" {key}" if key else ""
        return SettingsError(f"{self.at(section, key, index)}: {label}: {message}")

    def fail(self, section: str, index: int = 0) -> Fail:
        """The problems of one table, reported at their keys."""

        def fail(key: str | None, message: str) -> SettingsError:
            return self.error(section, key, message, index)

        return fail


def _parse_league(path: Path, data: dict[str, Any], where: KeyLocator) -> LeagueConfig:
    place = _Place(path, where)
    _check_sections(place, data)
    league = _table(data, "league", place)
    fail = place.fail("league")
    kwargs = read_fields(league, LeagueConfig, fail, skip=_NOT_LEAGUE_KEYS,
                         extra=_LEAGUE_EXTRA, base=path.parent,
                         inline={"match": _NOT_MATCH_KEYS})
    match = kwargs.pop("match")
    if "series_games" in kwargs and kwargs.get("format") != "series":
        raise fail("series_games", 'is for format = "series" only')
    if "replay_dir" in match:
        problem = directory_error(match["replay_dir"])
        if problem is not None:
            raise fail("replay_dir", f"{league['replay_dir']!r}: {problem}")
    table_size = kwargs.get("table_size", 2)
    match["rules"] = _read_rules(place, data, league, table_size)
    time_fail = place.fail("time")
    match["time"] = read_value(_table(data, "time", place), TimeControl, time_fail)
    kwargs["match"] = build(MatchSettings, match, fail)
    bots = _read_bots(place, data, league)
    if table_size > len(bots):
        raise fail("table_size", f"is larger than the number of bots ({len(bots)})")
    remote = [b.name for b in bots if b.remote]
    if remote and kwargs.get("executor", "local") != "local":
        raise fail(
            "executor",
            f"remote bots ({', '.join(remote)}) connect to this referee: they need the"
            ' "local" executor',
        )
    return LeagueConfig(path=path, bots=bots, **kwargs)


def _check_sections(place: _Place, data: dict[str, Any]) -> None:
    for section, value in data.items():
        if section not in SECTIONS:
            what = "section" if isinstance(value, dict | list) else "top-level key"
            raise SettingsError(
                f"{place.at(section)}: {section}: unknown {what} (known sections: league,"
                " time, rules, bots; settings such as seed go under [league])"
            )


def _table(data: dict[str, Any], name: str, place: _Place) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise place.error(name, None, "must be a table")
    return value


def _read_rules(
    place: _Place, data: dict[str, Any], league: dict[str, Any], table_size: int
) -> Rules:
    """The rules: ``[league] rules`` (a preset) with the flags of ``[rules]``."""
    preset = league.get("rules", "super-taki-2018")
    flags = _table(data, "rules", place)
    if not isinstance(preset, str) or preset not in PRESETS:
        raise place.error(
            "league", "rules", f"unknown preset {preset!r} (known: {', '.join(PRESETS)})"
        )
    rules = read_rules(preset, flags, place.fail("rules"))
    try:
        rules.check_deal(table_size)
    except DealError as exc:
        raise place.error(
            "rules", "hand_size", f"{exc}; [league] table_size is {table_size}"
        ) from None
    return rules


def _read_bots(
    place: _Place, data: dict[str, Any], league: dict[str, Any]
) -> tuple[BotSpec, ...]:
    raw_bots = data.get("bots", [])
    if not isinstance(raw_bots, list):
        raise SettingsError(
            f"{place.at('bots')}: bots: must be an array of tables (one [[bots]] table per bot)"
        )
    if not raw_bots:
        raise SettingsError(f"{place.path}: no [[bots]] entries: a league needs at least two"
                            " bots")
    default_sandbox = _sandbox_of(place.path, league, place.fail("league"), None)
    bots = [_read_bot(place, entry, i, default_sandbox) for i, entry in enumerate(raw_bots)]
    names = [b.name for b in bots]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise place.error("bots", "name", f"duplicate bot name {name!r}", i)
    if len(bots) < 2:
        raise SettingsError(f"{place.path}: a league needs at least two bots, found {len(bots)}")
    return tuple(bots)


def _sandbox_of(
    path: Path, table: dict[str, Any], fail: Fail, default: Sandbox | None
) -> Sandbox | None:
    """``sandbox`` and ``sandbox_bind`` of ``[league]`` or of a bot (which overrides the
    league's; paths relative to the league file)."""
    wanted = table.get("sandbox", default is not None)
    if not isinstance(wanted, bool):
        raise fail("sandbox", "must be true or false")
    binds = table.get("sandbox_bind")
    if binds is not None and (
        not isinstance(binds, list) or not all(isinstance(b, str) for b in binds)
    ):
        raise fail("sandbox_bind", "must be a list of path strings")
    if not wanted:
        if binds:
            raise fail("sandbox_bind", "needs sandbox = true")
        return None
    if binds is None:
        return default if default is not None else Sandbox()
    paths: tuple[str, ...] = tuple(str(path.parent / b) for b in binds)
    return Sandbox(binds=paths)


def _read_bot(place: _Place, entry: Any, i: int, default_sandbox: Sandbox | None) -> BotSpec:
    fail = place.fail("bots", i)
    if not isinstance(entry, dict):
        raise fail(None, "must be a table with a name and a command (or remote = true)")
    for key in entry:
        if key not in _BOT_KEYS:
            raise fail(key, unknown_key(_BOT_KEYS))
    name = _bot_name(entry, fail)
    origin = place.at("bots", None, i)
    remote = entry.get("remote", False)
    if not isinstance(remote, bool):
        raise fail("remote", "must be true or false")
    if remote:
        for key in _LOCAL_ONLY:
            if key in entry:
                raise fail(key, f"a remote bot (remote = true) has no {key}: it runs"
                                " elsewhere and connects to the referee")
        return BotSpec(name, None, origin=origin)
    command = _bot_command(place.path, entry, fail)
    sandbox = _sandbox_of(place.path, entry, fail, default_sandbox)
    return BotSpec(name, attrs.evolve(command, sandbox=sandbox), origin=origin)


def _bot_name(entry: dict[str, Any], fail: Fail) -> str:
    """NAME, or NAME@VERSION when the bot has a version: each version is an entrant of
    its own, rated apart."""
    name = entry.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise fail("name", "needs a name of letters, digits and _.+- (up to 64)")
    version = entry.get("version")
    if version is None:
        return name
    if isinstance(version, int) and not isinstance(version, bool):
        version = str(version)
    if not isinstance(version, str) or not NAME_PATTERN.match(version):
        raise fail("version", "must be a string of letters, digits and _.+- (up to 64),"
                              " or an integer")
    return f"{name}{VERSION_MARK}{version}"


def _bot_command(path: Path, entry: dict[str, Any], fail: Fail) -> BotCommand:
    command = entry.get("command")
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        command = shlex.join(command)
    if not isinstance(command, str) or not command.strip():
        raise fail("command", "needs a command (a string or a list of strings), or remote = true")
    cwd = _bot_cwd(path, entry.get("cwd"), fail)
    env = entry.get("env")
    if env is not None and (
        not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values())
    ):
        raise fail("env", "must be a table of strings")
    problem = env_error(env or {})
    if problem is not None:
        raise fail("env", problem)
    limits = _bot_limits(entry.get("limits", {}), fail)
    try:
        return make_command(command, cwd=cwd, env=env, limits=limits)
    except (TypeError, ValueError) as exc:
        raise fail("command", str(exc)) from None


def _bot_cwd(path: Path, cwd: object, fail: Fail) -> str | None:
    if cwd is None:
        return None
    if not isinstance(cwd, str):
        raise fail("cwd", "must be a path string")
    # A missing directory is left to the bot check: on a Dask cluster it need only exist
    # on the workers.
    problem = directory_error(path.parent / cwd)
    if problem is not None:
        raise fail("cwd", f"{cwd!r}: {problem}")
    return str(path.parent / cwd)


def _bot_limits(table: object, fail: Fail) -> ResourceLimits:
    """A bot's ``limits`` table; its problems are reported at ``limits``, naming the
    limit."""
    if not isinstance(table, dict):
        raise fail("limits", "must be a table")

    def fail_limit(key: str | None, message: str) -> Exception:
        return fail("limits", f"{key} {message}" if key else message)

    return build(ResourceLimits, read_fields(table, ResourceLimits, fail_limit), fail_limit)
