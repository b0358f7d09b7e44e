"""The competition file: every key has a default; a bad key names its line."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from referee.competition.config import SECTIONS, CompetitionConfig, load_competition
from referee.config.errors import SettingsError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "competition.toml"
    path.write_text(text)
    return path


def test_a_name_alone_starts_a_two_player_competition(tmp_path: Path) -> None:
    config = load_competition(write(tmp_path, '[competition]\nname = "spring cup"\n'))
    assert config.competition.name == "spring cup"
    assert config.ladder.table_sizes == (2,)
    assert config == CompetitionConfig(path=config.path, competition=config.competition)


def test_every_key_of_every_section_can_be_written(tmp_path: Path) -> None:
    """The file is read from the sections' fields: each one is a key, with its type."""
    lines = []
    for section, cls in SECTIONS.items():
        lines.append(f"[{section}]")
        for field in attrs.fields(attrs.resolve_types(cls)):
            default = field.default
            if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
                default = default.factory()
            if default is None:
                continue
            if isinstance(default, bool):
                text = "true" if default else "false"
            elif isinstance(default, tuple):
                text = f"[{', '.join(str(v) for v in default)}]"
            elif isinstance(default, str):
                text = f'"{default}"'
            else:
                text = str(default)
            lines.append(f"{field.name} = {text}")
    config = load_competition(write(tmp_path, "\n".join(lines) + "\n"))
    assert config == CompetitionConfig(path=config.path)


def test_four_and_two_player_tables_and_limits(tmp_path: Path) -> None:
    config = load_competition(write(tmp_path, """
[competition]
name = "cup"
[ladder]
table_sizes = [2, 4]
deals = 3
[time]
move_ms = 300
[sandbox]
memory_mb = 256
[submissions]
per_day = 5
active_bots = 2
"""))
    assert config.ladder.table_sizes == (2, 4)
    assert config.time.move_ms == 300
    assert config.sandbox.memory_mb == 256
    assert (config.submissions.per_day, config.submissions.active_bots) == (5, 2)


@pytest.mark.parametrize(("text", "expected"), [
    ("[competition]\nnmae = 'x'\n", "competition.toml:2: [competition] nmae: is not a known key"),
    ("[ladder]\ntable_sizes = [2, 11]\n", "competition.toml:2: [ladder] table_sizes: a table"
                                          " seats 2 to 10 players, not 11"),
    ("[ladder]\ntable_sizes = [2, 2]\n", "[ladder] table_sizes: a table size is given twice"),
    ("[sandbox]\nmemory_mb = '512'\n", "[sandbox] memory_mb: must be an integer"),
    ("[submissions]\nper_day = 0\n", "[submissions] per_day: "),
    ("[competition]\nrules = 'chess'\n", "[competition] rules: "),
    ("[time]\nmove_ms = -1\n", "[time] move_ms: "),
    ("[leage]\n", "[leage]: unknown section"),
    ("[rules]\nno_such_flag = true\n", "[rules] no_such_flag: "),
])
def test_a_bad_key_names_its_line(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_competition(write(tmp_path, text))
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_keys_that_only_go_together_are_read_together(tmp_path: Path) -> None:
    config = load_competition(write(tmp_path, "[time]\nbank_ms = 5000\nincrement_ms = 100\n"))
    assert (config.time.bank_ms, config.time.increment_ms) == (5000, 100)
    with pytest.raises(SettingsError, match=r"\[time\] increment_ms: increment_ms requires"):
        load_competition(write(tmp_path, "[time]\nincrement_ms = 100\n"))


def test_a_toml_syntax_error_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "competition.toml"
    path.write_text('[competition]\nname = "cup\n')
    with pytest.raises(SettingsError, match=rf"^{re.escape(str(path))}:2: TOML syntax error"):
        load_competition(path)
