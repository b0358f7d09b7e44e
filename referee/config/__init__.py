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
    __getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
