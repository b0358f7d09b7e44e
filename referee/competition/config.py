"""The competition file (TOML): every key has a default, so a file that holds only
``[competition]`` with ``name = "..."`` starts a two-player competition.

Each section is an attrs class below, a field of :class:`CompetitionConfig`; the file
is read from their fields (their names, types, defaults and validators) by
:mod:`referee.config.fields`, so a key exists in exactly one place. A bad key or value
raises :class:`~referee.config.errors.SettingsError` naming the file,
the line and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import attrs

from referee.config import (
    Fail,
    KeyLocator,
    SettingsError,
    available_cpus,
    read_fields,
    read_rules,
    read_toml_file,
)
from referee.core import TimeControl, at_least
from referee.rules import PRESETS, DealError, Rules

__all__ = [
    "CompetitionConfig", "CompetitionSection", "LadderSection", "SandboxSection",
    "SubmissionSection", "load_competition",
]

_positive = at_least(1)


def _table_sizes(_instance: object, _attribute: object, value: tuple[int, ...]) -> None:
    if not value:
        raise ValueError("needs at least one table size")
    if len(set(value)) != len(value):
        raise ValueError(f"a table size is given twice: {list(value)}")
    for size in value:
        if not 2 <= size <= 10:
            raise ValueError(f"a table seats 2 to 10 players, not {size}")


@attrs.frozen
class CompetitionSection:
    """``[competition]``."""

    #: Shown on the pages and in the API.
    name: str = "competition"
    #: The rules preset (RULES.md, "Variants"); flags go in ``[rules]``.
    rules: str = attrs.field(default="super-taki-2018",
                             validator=attrs.validators.in_(tuple(PRESETS)))
    #: The organizer's token, created (mode 0600) at the first start when missing;
    #: relative to the competition file.
    organizer_token_file: str = "organizer.token"
    #: Where uploads and built bots are kept; relative to the competition file. Empty:
    #: beside the database, in ``DB-files`` (``competition-files`` for
    #: ``competition.sqlite``).
    files: str = ""
    #: Requests a second each anonymous client (an address without a token) may make
    #: on average, and at most at once; beyond, the answer is 429.
    requests_per_second: int = attrs.field(default=5, validator=_positive)
    request_burst: int = attrs.field(default=60, validator=_positive)
    #: The ladder's bot logs kept, in all and of each bot version (the oldest files
    #: are evicted first).
    logs_mb: int = attrs.field(default=1024, validator=_positive)
    bot_logs_mb: int = attrs.field(default=64, validator=_positive)


@attrs.frozen
class LadderSection:
    """``[ladder]``: the games among the active bots."""

    #: The table sizes games are played at (``[2, 4]``: two- and four-player tables).
    table_sizes: tuple[int, ...] = attrs.field(default=(2,), validator=_table_sizes)
    #: Deals a table plays, each once per seat rotation (duplicate format).
    deals: int = attrs.field(default=1, validator=_positive)
    #: A new bot's placement phase: its first games come before any other table.
    placement_games: int = attrs.field(default=10, validator=_positive)
    #: Games played at once in this process.
    concurrency: int = attrs.field(factory=available_cpus, validator=_positive)
    #: Referee worker processes that play the games (0: in this process).
    workers: int = attrs.field(default=0, validator=at_least(0))
    #: The master seed of the deals; 0: a fresh one kept in the database.
    seed: int = attrs.field(default=0, validator=at_least(0))
    #: A Dask scheduler (``HOST:PORT``) that plays the games; empty: none.
    dask: str = ""


@attrs.frozen
class SandboxSection:
    """``[sandbox]``: limits of every bot process, and of each build and check."""

    memory_mb: int = attrs.field(default=512, validator=_positive)
    pids: int = attrs.field(default=64, validator=_positive)
    #: Percent of one CPU a bot may use (0: no limit; needs cgroups).
    cpu_percent: int = attrs.field(default=0, validator=at_least(0))
    #: Size of a bot's private /tmp.
    tmp_mb: int = attrs.field(default=64, validator=_positive)
    build_seconds: int = attrs.field(default=300, validator=_positive)
    build_memory_mb: int = attrs.field(default=1024, validator=_positive)
    build_pids: int = attrs.field(default=128, validator=_positive)
    #: The build runs in a private directory of this size; what it leaves there is the bot.
    build_disk_mb: int = attrs.field(default=256, validator=_positive)
    #: The whole compliance check of an upload (``taki-referee check``).
    check_seconds: int = attrs.field(default=300, validator=_positive)


@attrs.frozen
class SubmissionSection:
    """``[submissions]``: what one upload may hold and how often participants upload."""

    max_upload_mb: int = attrs.field(default=32, validator=_positive)
    #: The unpacked upload and the built bot, each.
    max_unpacked_mb: int = attrs.field(default=128, validator=_positive)
    max_files: int = attrs.field(default=5000, validator=_positive)
    #: Uploads a participant may make in any 24 hours.
    per_day: int = attrs.field(default=20, validator=_positive)
    #: Uploads of one participant waiting for their build and check at once.
    max_pending: int = attrs.field(default=2, validator=_positive)
    #: Active bots per participant: when one more passes its check, the oldest retires.
    active_bots: int = attrs.field(default=1, validator=_positive)
    #: Builds and checks run at once.
    concurrent_builds: int = attrs.field(default=1, validator=_positive)
    #: Megabytes a participant's uploads may unpack to in any 24 hours.
    unpacked_mb_per_day: int = attrs.field(default=1024, validator=_positive)
    #: Uploads (and build results) unpacked at once, on threads of their own.
    concurrent_unpacks: int = attrs.field(default=1, validator=_positive)
    #: Uploads of all participants being received or unpacked at once; one more is
    #: answered 503 before its body is read.
    concurrent_uploads: int = attrs.field(default=8, validator=_positive)
    #: Below this many megabytes free on the competition's disk, uploads are refused
    #: (507) and the ladder pauses until space returns.
    min_free_mb: int = attrs.field(default=256, validator=at_least(0))


@attrs.frozen
class CompetitionConfig:
    path: Path
    competition: CompetitionSection = attrs.field(factory=CompetitionSection)
    ladder: LadderSection = attrs.field(factory=LadderSection)
    sandbox: SandboxSection = attrs.field(factory=SandboxSection)
    submissions: SubmissionSection = attrs.field(factory=SubmissionSection)
    time: TimeControl = attrs.field(factory=TimeControl)
    rules: Rules = attrs.field(factory=Rules)

    @property
    def organizer_token_path(self) -> Path:
        return self.path.parent / self.competition.organizer_token_file

    def files_dir(self, db: Path) -> Path:
        """Where uploads and built bots are kept for the database ``db``."""
        if self.competition.files:
            return self.path.parent / self.competition.files
        return db.with_name(f"{db.stem}-files")


#: Fields of :class:`CompetitionConfig` that are not sections read from their class's
#: fields: the file's place, and the rules (the preset of ``[competition]`` with the
#: flags of ``[rules]``).
_NOT_SECTIONS: Final = ("path", "rules")
#: The sections of the file, each read from its class's fields.
SECTIONS: Final[dict[str, type]] = {
    f.name: f.type for f in attrs.fields(attrs.resolve_types(CompetitionConfig))
    if f.name not in _NOT_SECTIONS and f.type is not None
}


def load_competition(path: str | Path) -> CompetitionConfig:
    """The competition file at ``path``; SettingsError naming the line of a bad key."""
    path = Path(path)
    text, data = read_toml_file(path, "competition file")
    where = KeyLocator(text)

    def failer(section: str) -> Fail:
        def fail(key: str | None, message: str) -> SettingsError:
            line = where.line_of(section, key)
            at = f"{path}:{line}" if line else str(path)
            return SettingsError(f"{at}: [{section}]{' ' + key if key else ''}: {message}")
        return fail

    known = [*SECTIONS, "rules"]
    for name, value in data.items():
        if name not in known or not isinstance(value, dict):
            raise failer(name)(None, f"unknown section (known: {', '.join(known)})")
    def at_section(key: str | None, message: str) -> Exception:
        return failer(key or "competition")(None, message)

    sections = read_fields(data, CompetitionConfig, at_section, skip=_NOT_SECTIONS,
                           extra=("rules",), within=failer)
    competition = sections.get("competition", CompetitionSection())
    ladder = sections.get("ladder", LadderSection())
    rules = read_rules(competition.rules, data.get("rules", {}), failer("rules"))
    for size in ladder.table_sizes:
        try:
            rules.check_deal(size)
        except DealError as exc:
            raise failer("ladder")("table_sizes", str(exc)) from None
    return CompetitionConfig(path=path, rules=rules, **sections)
