"""Reading what a user wrote (league files, CLI bot arguments) into checked specs. May
import referee.core and referee.rules, never the trio shell."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .bot_commands import (
        NAME_PATTERN,
        VERSION_MARK,
        default_name,
        make_command,
        parse_bot_arg,
        unique_names,
    )
    from .errors import SettingsError
    from .fields import Fail, read_fields
    from .rule_flags import read_rules, rule_flag_error
    from .settings import LeagueConfig, available_cpus, directory_error, load_league
    from .toml_lines import KeyLocator, read_toml_file
else:
    __getattr__ = lazy_face(__name__, {
        "bot_commands": (
            "NAME_PATTERN", "VERSION_MARK", "default_name", "make_command", "parse_bot_arg",
            "unique_names",
        ),
        "errors": ("SettingsError",),
        "fields": ("Fail", "read_fields"),
        "rule_flags": ("read_rules", "rule_flag_error"),
        "settings": ("LeagueConfig", "available_cpus", "directory_error", "load_league"),
        "toml_lines": ("KeyLocator", "read_toml_file"),
    })

__all__ = [
    "NAME_PATTERN",
    "VERSION_MARK",
    "Fail",
    "KeyLocator",
    "LeagueConfig",
    "SettingsError",
    "available_cpus",
    "default_name",
    "directory_error",
    "load_league",
    "make_command",
    "parse_bot_arg",
    "read_fields",
    "read_rules",
    "read_toml_file",
    "rule_flag_error",
    "unique_names",
]
