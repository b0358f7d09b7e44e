"""League files in TOML (bots given on the command line: ``referee.config.bot_commands``).

A bad setting raises :class:`SettingsError` naming the file, the line and the key, so a
user never has to guess what the referee did not like.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import attrs

from referee.config.bot_commands import NAME_PATTERN, VERSION_MARK, env_error, make_command
from referee.config.errors import SettingsError
from referee.config.rule_flags import rule_flag_error
from referee.config.toml_lines import KeyLocator
from referee.core.clock import TimeControl
from referee.core.specs import BotSpec, ResourceLimits, Sandbox
from referee.ratings.models import RATING_MODELS, RatingModel
from referee.rules import PRESETS, RULES_REVISION, Rules
from referee.rules.config import DealError

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


@attrs.frozen
class LeagueConfig:
    path: Path
    bots: tuple[BotSpec, ...]
    table_size: int = 2
    deals: int = 6
    #: The master seed of the deals; None: the one the league's database holds, which
    #: is a fresh one from when the database was created (``referee.league.runner``).
    seed: int | None = None
    concurrency: int = attrs.field(factory=available_cpus)
    rules: Rules = attrs.field(factory=Rules)
    time: TimeControl = attrs.field(factory=TimeControl)
    replay_dir: Path | None = None
    restart: bool = True
    fault_policy: str = "forfeit"
    strikes: int = 3
    #: Where the games are played: "local" or "dask://HOST:PORT".
    executor: str = "local"
    #: The most deals one unit of work (one set of bot processes) plays; None: sized
    #: from ``concurrency`` (``referee.league.runner.deals_per_unit``).
    deals_per_process: int | None = None
    #: "single": every game is rated on its own; "series": the games are played in
    #: series of ``series_games`` (R24), and the series are rated.
    format: str = "single"
    series_games: int = 6

    #: Referee worker processes that play the units (``referee.league.pool_executor``);
    #: None: the games are played in the referee's own process.
    workers: int | None = None
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
            f"rules={sorted(self.rules.to_wire().items())};rules_revision={RULES_REVISION}"
        )


_LEAGUE_KEYS = {
    "table_size", "deals", "seed", "concurrency", "rules", "replay_dir", "restart",
    "fault_policy", "strikes", "executor", "deals_per_process", "sandbox", "sandbox_bind",
    "format", "series_games", "rating_model", "workers",
}
#: ``[league] format``: single games, or series of games with penalty points (R24).
LEAGUE_FORMATS = ("single", "series")
_TIME_KEYS = {"move_ms", "bank_ms", "increment_ms", "reaction_ms", "startup_ms", "grace_ms"}
_BOT_KEYS = {
    "name", "version", "command", "remote", "cwd", "env", "limits", "sandbox", "sandbox_bind",
}
_LIMIT_KEYS = {
    "address_space_mb", "cpu_seconds", "file_size_mb", "open_files", "memory_mb", "pids",
    "cpu_percent",
}
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


def _syntax_error(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> SettingsError:
    """A TOML syntax error with its line number and the text of that line."""
    message = str(exc)
    lines = text.splitlines()
    match = re.search(r"\(at line (\d+), column \d+\)", message)
    if match:
        number = int(match.group(1))
    elif "end of document" in message:
        number = len(lines)
    else:
        return SettingsError(f"{path}: TOML syntax error: {message}")
    message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
    shown = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return SettingsError(f"{path}:{number}: TOML syntax error: {message}: {shown!r}")


def load_league(path: str | Path) -> LeagueConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"cannot read league file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise SettingsError(f"{path}: not a UTF-8 text file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(path, text, exc) from None
    return _parse_league(path, data, KeyLocator(text))


def _parse_league(path: Path, data: dict[str, Any], where: KeyLocator) -> LeagueConfig:
    def fail(section: str, key: str | None, message: str, index: int = 0) -> SettingsError:
        line = where.line_of(section, key, index)
        at = f"{path}:{line}" if line else str(path)
        label = f"[{section}]" + (f" {key}" if key else "")
        if section == "bots":
            label = f"[[bots]] #{index + 1}" + (f" {key}" if key else "")
        return SettingsError(f"{at}: {label}: {message}")

    for section, value in data.items():
        if section not in ("league", "time", "bots", "rules"):
            line = where.line_of(section)
            at = f"{path}:{line}" if line else str(path)
            what = "section" if isinstance(value, dict | list) else "top-level key"
            raise SettingsError(
                f"{at}: {section}: unknown {what} (known sections: league, time, rules, bots;"
                " settings such as seed go under [league])"
            )
    league = _table(data, "league", fail)
    for key in league:
        if key not in _LEAGUE_KEYS:
            raise fail("league", key, f"unknown key (known: {', '.join(sorted(_LEAGUE_KEYS))})")
    kwargs: dict[str, Any] = {}
    for key in ("table_size", "deals", "seed", "concurrency", "strikes", "deals_per_process",
                "series_games", "workers"):
        if key in league:
            value = league[key]
            if not isinstance(value, int) or isinstance(value, bool):
                raise fail("league", key, f"must be an integer, not {value!r}")
            kwargs[key] = value
    if not 2 <= kwargs.get("table_size", 2) <= 10:
        raise fail("league", "table_size", "must be between 2 and 10")
    if kwargs.get("deals", 1) < 1:
        raise fail("league", "deals", "must be at least 1")
    if kwargs.get("concurrency", 1) < 1:
        raise fail("league", "concurrency", "must be at least 1")
    if kwargs.get("workers", 1) < 1:
        raise fail("league", "workers", "must be at least 1")
    if kwargs.get("strikes", 1) < 1:
        raise fail("league", "strikes", "must be at least 1")
    if kwargs.get("deals_per_process", 1) < 1:
        raise fail("league", "deals_per_process", "must be at least 1")
    if "format" in league:
        if league["format"] not in LEAGUE_FORMATS:
            raise fail("league", "format", 'must be "single" or "series"')
        kwargs["format"] = league["format"]
    if "series_games" in kwargs:
        if kwargs.get("format") != "series":
            raise fail("league", "series_games", 'is for format = "series" only')
        if kwargs["series_games"] < 1:
            raise fail("league", "series_games", "must be at least 1")
    if "restart" in league:
        if not isinstance(league["restart"], bool):
            raise fail("league", "restart", "must be true or false")
        kwargs["restart"] = league["restart"]
    if "fault_policy" in league:
        if league["fault_policy"] not in ("forfeit", "strikes"):
            raise fail("league", "fault_policy", "must be \"forfeit\" or \"strikes\"")
        kwargs["fault_policy"] = league["fault_policy"]
    if "replay_dir" in league:
        if not isinstance(league["replay_dir"], str):
            raise fail("league", "replay_dir", "must be a path string")
        kwargs["replay_dir"] = path.parent / league["replay_dir"]
        problem = directory_error(kwargs["replay_dir"])
        if problem is not None:
            raise fail("league", "replay_dir", f"{league['replay_dir']!r}: {problem}")
    if "rating_model" in league:
        if league["rating_model"] not in RATING_MODELS:
            known = " or ".join(f'"{m}"' for m in RATING_MODELS)
            raise fail("league", "rating_model", f"must be {known}, not {league['rating_model']!r}")
        kwargs["rating_model"] = league["rating_model"]
    if "executor" in league:
        problem = executor_error(league["executor"])
        if problem is not None:
            raise fail("league", "executor", problem)
        kwargs["executor"] = league["executor"]

    preset = league.get("rules", "super-taki-2018")
    flags = _table(data, "rules", fail)
    for key, value in flags.items():
        problem = rule_flag_error(key, value)
        if problem is not None:
            raise fail("rules", key, problem)
    if preset not in PRESETS:
        raise fail("league", "rules", f"unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    try:
        kwargs["rules"] = Rules.preset(preset, **flags)
    except (TypeError, ValueError) as exc:
        culprit = next((k for k in flags if k in str(exc)), None)
        raise fail("rules", culprit, str(exc)) from None
    table_size = kwargs.get("table_size", 2)
    try:
        kwargs["rules"].check_deal(table_size)
    except DealError as exc:
        raise fail("rules", "hand_size", f"{exc}; [league] table_size is {table_size}") from None

    time = _table(data, "time", fail)
    for key, value in time.items():
        if key not in _TIME_KEYS:
            raise fail("time", key, f"unknown key (known: {', '.join(sorted(_TIME_KEYS))})")
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise fail("time", key, f"must be a whole number of milliseconds, not {value!r}")
    try:
        kwargs["time"] = TimeControl(**time)
    except (TypeError, ValueError) as exc:
        culprit = next((k for k in time if k in str(exc)), None)
        raise fail("time", culprit, str(exc)) from None

    raw_bots = data.get("bots", [])
    if not isinstance(raw_bots, list):
        line = where.line_of("bots")
        raise SettingsError(
            f"{path}:{line}: bots: must be an array of tables (one [[bots]] table per bot)"
            if line else f"{path}: bots: must be an array of tables (one [[bots]] table per bot)"
        )
    if not raw_bots:
        raise SettingsError(f"{path}: no [[bots]] entries: a league needs at least two bots")
    default_sandbox = _sandbox_of(path, league, fail, "league", 0, None)
    bots = []
    for i, entry in enumerate(raw_bots):
        line = where.line_of("bots", None, i)
        origin = f"{path}:{line}" if line else str(path)
        bot = attrs.evolve(_parse_bot(path, entry, i, fail), origin=origin)
        if bot.command is not None and isinstance(entry, dict):
            sandbox = _sandbox_of(path, entry, fail, "bots", i, default_sandbox)
            bot = attrs.evolve(bot, command=attrs.evolve(bot.command, sandbox=sandbox))
        bots.append(bot)
    names = [b.name for b in bots]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise fail("bots", "name", f"duplicate bot name {name!r}", i)
    if len(bots) < 2:
        raise SettingsError(f"{path}: a league needs at least two bots, found {len(bots)}")
    if kwargs.get("table_size", 2) > len(bots):
        raise fail("league", "table_size", f"is larger than the number of bots ({len(bots)})")
    remote = [b.name for b in bots if b.remote]
    if remote and kwargs.get("executor", "local") != "local":
        raise fail(
            "league", "executor",
            f"remote bots ({', '.join(remote)}) connect to this referee: they need the"
            ' "local" executor',
        )
    return LeagueConfig(path=path, bots=tuple(bots), **kwargs)


def _table(data: dict[str, Any], name: str, fail: Any) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise fail(name, None, "must be a table")
    return value


def _sandbox_of(
    path: Path, table: dict[str, Any], fail: Any, name: str, i: int,
    default: Sandbox | None,
) -> Sandbox | None:
    """``sandbox`` and ``sandbox_bind`` of ``[league]`` or of a bot (which overrides the
    league's; paths relative to the league file)."""
    wanted = table.get("sandbox", default is not None)
    if not isinstance(wanted, bool):
        raise fail(name, "sandbox", "must be true or false", i)
    binds = table.get("sandbox_bind")
    if binds is not None and (
        not isinstance(binds, list) or not all(isinstance(b, str) for b in binds)
    ):
        raise fail(name, "sandbox_bind", "must be a list of path strings", i)
    if not wanted:
        if binds:
            raise fail(name, "sandbox_bind", "needs sandbox = true", i)
        return None
    if binds is None:
        return default if default is not None else Sandbox()
    paths: tuple[str, ...] = tuple(str(path.parent / b) for b in binds)
    return Sandbox(binds=paths)


def _parse_bot(path: Path, entry: Any, i: int, fail: Any) -> BotSpec:
    if not isinstance(entry, dict):
        raise fail("bots", None, "must be a table with a name and a command (or remote = true)", i)
    for key in entry:
        if key not in _BOT_KEYS:
            raise fail("bots", key, f"unknown key (known: {', '.join(sorted(_BOT_KEYS))})", i)
    name = entry.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise fail("bots", "name", "needs a name of letters, digits and _.+- (up to 64)", i)
    version = entry.get("version")
    if version is not None:
        if isinstance(version, int) and not isinstance(version, bool):
            version = str(version)
        if not isinstance(version, str) or not NAME_PATTERN.match(version):
            raise fail("bots", "version",
                        "must be a string of letters, digits and _.+- (up to 64), or an integer",
                        i)
        # Each version is an entrant of its own, rated apart: NAME@VERSION.
        name = f"{name}{VERSION_MARK}{version}"
    remote = entry.get("remote", False)
    if not isinstance(remote, bool):
        raise fail("bots", "remote", "must be true or false", i)
    if remote:
        for key in ("command", "cwd", "env", "limits", "sandbox", "sandbox_bind"):
            if key in entry:
                raise fail(
                    "bots", key, f"a remote bot (remote = true) has no {key}: it runs"
                    " elsewhere and connects to the referee", i,
                )
        return BotSpec(name, None)
    command = entry.get("command")
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        command = shlex.join(command)
    if not isinstance(command, str) or not command.strip():
        raise fail(
            "bots", "command",
            "needs a command (a string or a list of strings), or remote = true", i,
        )
    cwd = entry.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str):
            raise fail("bots", "cwd", "must be a path string", i)
        # A missing directory is left to the bot check: on a Dask cluster it need only
        # exist on the workers.
        problem = directory_error(path.parent / cwd)
        if problem is not None:
            raise fail("bots", "cwd", f"{cwd!r}: {problem}", i)
        cwd = str(path.parent / cwd)
    env = entry.get("env")
    if env is not None and (
        not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values())
    ):
        raise fail("bots", "env", "must be a table of strings", i)
    problem = env_error(env or {})
    if problem is not None:
        raise fail("bots", "env", problem, i)
    limits_raw = entry.get("limits", {})
    if not isinstance(limits_raw, dict):
        raise fail("bots", "limits", "must be a table", i)
    for key in limits_raw:
        if key not in _LIMIT_KEYS:
            raise fail("bots", "limits", f"unknown limit {key!r}", i)
    try:
        limits = ResourceLimits(**limits_raw)
    except (TypeError, ValueError) as exc:
        raise fail("bots", "limits", str(exc), i) from None
    try:
        cmd = make_command(command, cwd=cwd, env=env, limits=limits)
    except (TypeError, ValueError) as exc:
        raise fail("bots", "command", str(exc), i) from None
    return BotSpec(name, cmd)
