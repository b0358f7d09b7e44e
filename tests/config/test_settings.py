"""League files: the documented example parses, and every mistake is reported with the
file, the line and the key at fault."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from referee.config.bot_commands import env_error, make_command, parse_bot_arg
from referee.config.errors import SettingsError
from referee.config.rule_flags import rule_flag_error
from referee.config.settings import LeagueConfig, available_cpus, directory_error, load_league
from referee.core.clock import TimeBasis
from referee.core.specs import HardLimits, Sandbox
from referee.league.store import ResultStore, StoreError
from referee.rules import RULES_REVISION

REPO = Path(__file__).resolve().parents[2]

ISSUE_EXAMPLE = """\
[league]
table_size = 2
deals = 6
seed = 5
concurrency = 2
rules = "super-taki-2018"

[time]
move_ms = 1000
bank_ms = 10000
increment_ms = 100

[[bots]]
name = "greedy"
command = "python sample_bots/greedy_bot.py"

[[bots]]
name = "random"
command = "python sample_bots/random_bot.py"
"""

TWO_BOTS = """\
[[bots]]
name = "greedy"
command = "python sample_bots/greedy_bot.py"

[[bots]]
name = "random"
command = "python sample_bots/random_bot.py"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "league.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_issue_example_parses(tmp_path: Path) -> None:
    config = load_league(write(tmp_path, ISSUE_EXAMPLE))
    assert config.table_size == 2
    assert config.deals == 6
    assert config.seed == 5
    assert config.concurrency == 2
    assert config.match.rules.name == "super-taki-2018"
    time = config.match.time
    assert (time.move_ms, time.bank_ms, time.increment_ms) == (
        1000, 10000, 100,
    )
    assert [b.name for b in config.bots] == ["greedy", "random"]
    greedy = config.bots[0].command
    # "python" means the referee's own interpreter.
    assert greedy.argv == (sys.executable, "sample_bots/greedy_bot.py")
    assert greedy.cwd is None and greedy.env is None


def test_demo_league_parses() -> None:
    config = load_league(REPO / "examples" / "demo.toml")
    assert len(config.bots) == 3
    assert config.table_size == 2


def test_defaults(tmp_path: Path) -> None:
    config = load_league(write(tmp_path, TWO_BOTS))
    assert config.table_size == 2
    assert config.concurrency == len(os.sched_getaffinity(0))
    assert config.deals_per_process is None
    assert config.match.rules.name == "super-taki-2018"
    assert config.match.time.move_ms == 1000 and config.match.time.bank_ms is None
    assert config.match.replay_dir is None
    assert config.match.fault_policy == "forfeit" and config.match.restart
    assert config.rating_model is None  # the default of the table size


def test_every_key(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    config = load_league(write(tmp_path, """\
        [league]
        table_size = 3
        deals = 2
        seed = -7
        concurrency = 1
        rules = "super-taki-classic"
        replay_dir = "replays"
        restart = false
        fault_policy = "strikes"
        strikes = 2
        deals_per_process = 4
        rating_model = "plackett-luce"

        [time]
        move_ms = 500
        bank_ms = 20000
        increment_ms = 50
        reaction_ms = 300
        startup_ms = 4000
        grace_ms = 10

        [rules]
        voluntary_draw = true
        hand_size = 7
        action_limit = 2000

        [[bots]]
        name = "a"
        command = ["python", "my bot.py", "--level", "3"]
        cwd = "bots"
        env = { LEVEL = "3" }
        limits = { cpu_seconds = 60, address_space_mb = 2048, open_files = 64, file_size_mb = 1 }

        [[bots]]
        name = "b.v2"
        command = "./b"

        [[bots]]
        name = "c"
        command = "./c"
        [bots.limits]
        cpu_seconds = 5
        """))
    assert (config.table_size, config.deals, config.seed, config.concurrency) == (3, 2, -7, 1)
    assert config.match.rules.name == "super-taki-classic"
    assert config.match.rules.voluntary_draw and config.match.rules.hand_size == 7
    assert config.match.rules.action_limit == 2000
    assert config.match.replay_dir == tmp_path / "replays"  # relative to the league file
    assert not config.match.restart and config.match.fault_policy == "strikes"
    assert config.match.strikes == 2
    assert config.deals_per_process == 4
    assert config.rating_model == "plackett-luce"
    assert config.match.time.reaction_ms == 300 and config.match.time.grace_ms == 10
    a = config.bots[0].command
    assert a.argv == (sys.executable, "my bot.py", "--level", "3")
    assert a.cwd == str(tmp_path / "bots")  # relative to the league file
    assert dict(a.env or {}) == {"LEVEL": "3"}
    assert a.limits.cpu_seconds == 60 and a.limits.open_files == 64
    assert config.bots[2].command.limits.cpu_seconds == 5


def test_the_scoring_flag_sets_what_cards_left_in_hand_are_worth(tmp_path: Path) -> None:
    text = "[rules]\nscoring = { colored_action = 5, colorless = 0 }\n" + TWO_BOTS
    scoring = load_league(write(tmp_path, text)).match.rules.scoring
    assert (scoring.colored_action, scoring.colorless) == (5, 0)


@pytest.mark.parametrize(("value", "problem"), [
    ({"colored_action": 1, "colorless": 2}, None),
    ({"colored_action": 1}, "must be a table of both colored_action and colorless"),
    ({"colored_action": 1, "colorless": 2, "number": 3}, "must be a table of both"),
    ({"colored_action": -1, "colorless": 2}, "colored_action must be an integer from 0, not -1"),
    ({"colored_action": 1, "colorless": True}, "colorless must be an integer from 0, not True"),
    (10, "must be a table of both"),
])
def test_scoring_flag_values(value: object, problem: str | None) -> None:
    error = rule_flag_error("scoring", value)
    assert error == problem if problem is None else problem in (error or "")


def test_a_version_makes_an_entrant_of_its_own(tmp_path: Path) -> None:
    text = TWO_BOTS.replace('name = "greedy"', 'name = "greedy"\nversion = 2').replace(
        'name = "random"', 'name = "random"\nversion = "1.4-rc1"')
    config = load_league(write(tmp_path, text))
    assert [b.name for b in config.bots] == ["greedy@2", "random@1.4-rc1"]


def test_identity_covers_what_decides_the_games(tmp_path: Path) -> None:
    base = load_league(write(tmp_path, ISSUE_EXAMPLE))
    assert base.identity() == load_league(write(tmp_path, ISSUE_EXAMPLE)).identity()
    for old, new in [("seed = 5", "seed = 6"),
                     ('rules = "super-taki-2018"', 'rules = "super-taki-classic"')]:
        changed = load_league(write(tmp_path, ISSUE_EXAMPLE.replace(old, new)))
        assert changed.identity() != base.identity(), new
    # A league grows: more deals and other bots are the same league, extended.
    for old, new in [("deals = 6", "deals = 7"), ('name = "random"', 'name = "rnd"')]:
        grown = load_league(write(tmp_path, ISSUE_EXAMPLE.replace(old, new)))
        assert grown.identity() == base.identity(), new
    # The time control and concurrency may change between runs of one league.
    other = ISSUE_EXAMPLE.replace("concurrency = 2", "concurrency = 1").replace(
        "move_ms = 1000", "move_ms = 2000")
    assert load_league(write(tmp_path, other)).identity() == base.identity()
    # The engine's rules revision decides the games too: a database of another revision
    # is refused, with what differs.
    assert f"rules_revision={RULES_REVISION}" in base.identity()
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.bind("league", base.identity().replace(
            f"rules_revision={RULES_REVISION}", f"rules_revision={RULES_REVISION - 1}"))
        with pytest.raises(StoreError, match=f"rules_revision: {RULES_REVISION - 1} in the"
                                             f" database, {RULES_REVISION} now"):
            store.bind("league", base.identity())


# Each bad file marks the line the error must name with "# HERE"; the key is the
# setting the message must name.
BAD_FILES = {
    "syntax error": ("deals", """\
        [league]
        deals = = 6  # HERE
        """ + TWO_BOTS),
    "key defined twice": ("seed", """\
        [league]
        seed = 5
        seed = 6  # HERE
        """ + TWO_BOTS),
    "unterminated string": ("command", """\
        [league]
        deals = 2
        [[bots]]
        name = "a"
        command = "python a.py  # HERE
        """),
    "unknown league key": ("colour", """\
        [league]
        deals = 2
        colour = "red"  # HERE
        """ + TWO_BOTS),
    "unknown section": ("extras", """\
        [league]
        deals = 2
        [extras]  # HERE
        x = 1
        """ + TWO_BOTS),
    "top-level key": ("seed", """\
        seed = 5  # HERE
        [league]
        deals = 2
        """ + TWO_BOTS),
    "version with a space": ("version", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        version = "v 2"  # HERE
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "scoring with one key": ("scoring", """\
        [rules]
        scoring = { colored_action = 5 }  # HERE
        """ + TWO_BOTS),
    "scoring below zero": ("colorless", """\
        [rules]
        scoring = { colored_action = 5, colorless = -1 }  # HERE
        """ + TWO_BOTS),
    "unknown bot key": ("weight", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        [[bots]]
        name = "b"
        command = "python b.py"
        weight = 3  # HERE
        """),
    "deals not an integer": ("deals", """\
        [league]
        seed = 1
        deals = "six"  # HERE
        """ + TWO_BOTS),
    "concurrency a float": ("concurrency", """\
        [league]
        concurrency = 1.5  # HERE
        """ + TWO_BOTS),
    "table_size a boolean": ("table_size", """\
        [league]
        table_size = true  # HERE
        """ + TWO_BOTS),
    "restart not a boolean": ("restart", """\
        [league]
        restart = "yes"  # HERE
        """ + TWO_BOTS),
    "seed a string": ("seed", """\
        [league]
        seed = "5"  # HERE
        """ + TWO_BOTS),
    "table_size too big": ("table_size", """\
        [league]
        table_size = 11  # HERE
        """ + TWO_BOTS),
    "table_size too small": ("table_size", """\
        [league]
        table_size = 1  # HERE
        """ + TWO_BOTS),
    "table_size above the number of bots": ("table_size", """\
        [league]
        table_size = 3  # HERE
        """ + TWO_BOTS),
    "no deals": ("deals", """\
        [league]
        deals = 0  # HERE
        """ + TWO_BOTS),
    "no concurrency": ("concurrency", """\
        [league]
        concurrency = 0  # HERE
        """ + TWO_BOTS),
    "no strikes": ("strikes", """\
        [league]
        fault_policy = "strikes"
        strikes = 0  # HERE
        """ + TWO_BOTS),
    "bad fault policy": ("fault_policy", """\
        [league]
        fault_policy = "pray"  # HERE
        """ + TWO_BOTS),
    "duplicate bot name": ("name", """\
        [[bots]]
        name = "greedy"
        command = "python a.py"

        [[bots]]
        name = "greedy"  # HERE
        command = "python b.py"
        """),
    "missing command": ("command", """\
        [[bots]]
        name = "a"
        command = "python a.py"

        [[bots]]  # HERE
        name = "b"

        [[bots]]
        name = "c"
        command = "python c.py"
        """),
    "empty command": ("command", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        [[bots]]
        name = "b"
        command = "   "  # HERE
        """),
    "unparsable command": ("command", """\
        [[bots]]
        name = "a"
        command = "python 'a.py"  # HERE
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "missing name": ("name", """\
        [[bots]]  # HERE
        command = "python a.py"
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "bad name": ("name", """\
        [[bots]]
        name = "a,b"  # HERE
        command = "python a.py"
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "env not strings": ("env", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        env = { LEVEL = 3 }  # HERE
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "limit not an integer": ("limits", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        limits = { cpu_seconds = "ten" }  # HERE
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "unknown limit in a sub-table": ("limits", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        [[bots]]
        name = "b"
        command = "python b.py"
        [bots.limits]  # HERE
        gpu = 1
        """),
    "bots not tables": ("bots", """\
        bots = ["greedy", "random"]  # HERE
        """),
    "move_ms zero": ("move_ms", """\
        [time]
        bank_ms = 1000
        move_ms = 0  # HERE
        """ + TWO_BOTS),
    "move_ms a float": ("move_ms", """\
        [time]
        move_ms = 1.5  # HERE
        """ + TWO_BOTS),
    "bank_ms negative": ("bank_ms", """\
        [time]
        bank_ms = -1  # HERE
        """ + TWO_BOTS),
    "move_ms a string": ("move_ms", """\
        [time]
        move_ms = "1s"  # HERE
        """ + TWO_BOTS),
    "increment without a bank": ("increment_ms", """\
        [time]
        move_ms = 1000
        increment_ms = 100  # HERE
        """ + TWO_BOTS),
    "unknown time key": ("hurry_ms", """\
        [time]
        hurry_ms = 5  # HERE
        """ + TWO_BOTS),
    "unknown rules preset": ("rules", """\
        [league]
        deals = 2
        rules = "taki-1980"  # HERE
        """ + TWO_BOTS),
    "unknown rule flag": ("wild", """\
        [rules]
        voluntary_draw = true
        wild = true  # HERE
        """ + TWO_BOTS),
    "deals_per_process zero": ("deals_per_process", """\
        [league]
        deals = 2
        deals_per_process = 0  # HERE
        """ + TWO_BOTS),
    "deals_per_process not an integer": ("deals_per_process", """\
        [league]
        deals_per_process = 1.5  # HERE
        """ + TWO_BOTS),
    "unknown rating model": ("rating_model", """\
        [league]
        deals = 2
        rating_model = "trueskill"  # HERE
        """ + TWO_BOTS),
    "rating model not a string": ("rating_model", """\
        [league]
        rating_model = 2  # HERE
        """ + TWO_BOTS),
    "rule flag of the wrong type": ("pyramid", """\
        [rules]
        pyramid = "yes"  # HERE
        """ + TWO_BOTS),
    "rule flag out of range": ("hand_size", """\
        [rules]
        voluntary_draw = false
        hand_size = 0  # HERE
        """ + TWO_BOTS),
    "hand_size too large to deal": ("table_size is 2", """\
        [rules]
        hand_size = 52  # HERE
        """ + TWO_BOTS),
    "environment variable name with =": ("env", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        env = { "A=B" = "x" }  # HERE
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "empty environment variable name": ("env", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        env = { "" = "x" }  # HERE
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "NUL in an environment value": ("env", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        [[bots]]
        name = "b"
        command = "python b.py"
        env = { LEVEL = "3\\u0000" }  # HERE
        """),
    "NUL in a command": ("command", """\
        [[bots]]
        name = "a"
        command = "python a.py\\u0000"  # HERE
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "NUL in a command list": ("command", """\
        [[bots]]
        name = "a"
        command = ["python", "a\\u0000.py"]  # HERE
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "cwd a file": ("cwd", """\
        [[bots]]
        name = "a"
        command = "python a.py"
        cwd = "league.toml"  # HERE
        [[bots]]
        name = "b"
        command = "python b.py"
        """),
    "replay_dir a file": ("replay_dir", """\
        [league]
        replay_dir = "league.toml"  # HERE
        """ + TWO_BOTS),
    "replay_dir under a file": ("replay_dir", """\
        [league]
        replay_dir = "league.toml/replays"  # HERE
        """ + TWO_BOTS),
    "move_ms beyond the protocol": ("move_ms", """\
        [time]
        move_ms = 1000000000000  # HERE
        """ + TWO_BOTS),
    "reaction_ms beyond the protocol": ("reaction_ms", """\
        [time]
        reaction_ms = 3000000000  # HERE
        """ + TWO_BOTS),
    "bank_ms beyond the protocol": ("bank_ms", """\
        [time]
        bank_ms = 2147483648  # HERE
        """ + TWO_BOTS),
    "unknown time basis": ("time_basis", """\
        [time]
        time_basis = "process"  # HERE
        """ + TWO_BOTS),
    "negative void replays": ("void_replays", """\
        [league]
        void_replays = -1  # HERE
        """ + TWO_BOTS),
}


def test_time_basis_and_void_replays(tmp_path: Path) -> None:
    config = load_league(write(tmp_path, """\
        [league]
        void_replays = 0

        [time]
        move_ms = 200
        time_basis = "wall"
        """ + TWO_BOTS))
    assert config.match.time.time_basis is TimeBasis.WALL
    assert config.match.time.wall_cap_ms(205) == 205
    assert config.match.void_replays == 0
    defaults = load_league(write(tmp_path, TWO_BOTS))
    assert defaults.match.time.time_basis is TimeBasis.CPU  # fair by default
    assert defaults.match.time.wall_cap_ms(205) == 2050
    assert defaults.match.void_replays == 2


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_file_names_key_and_line(tmp_path: Path, case: str) -> None:
    key, text = BAD_FILES[case]
    text = textwrap.dedent(text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "# HERE" in row)
    path = write(tmp_path, text)
    with pytest.raises(SettingsError) as info:
        load_league(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert key in message, message


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="cannot read league file"):
        load_league(tmp_path / "missing.toml")
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe[league]\n")
    with pytest.raises(SettingsError, match="UTF-8"):
        load_league(binary)


def test_a_league_needs_two_bots(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="at least two bots"):
        load_league(write(tmp_path, "[league]\ndeals = 2\n"))
    with pytest.raises(SettingsError, match="at least two bots"):
        load_league(write(tmp_path, '[[bots]]\nname = "a"\ncommand = "python a.py"\n'))


def test_config_is_a_value(tmp_path: Path) -> None:
    config = load_league(write(tmp_path, ISSUE_EXAMPLE))
    assert isinstance(config, LeagueConfig)
    assert config == load_league(write(tmp_path, ISSUE_EXAMPLE))


def test_each_bot_knows_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        [league]
        deals = 2

        [[bots]]
        name = "a"
        command = "./a"

        [[bots]]
        command = "./b"
        name = "b"
        [bots.limits]
        cpu_seconds = 5

        [[bots]]
        name = "c"
        remote = true
        """)
    config = load_league(path)
    assert [b.origin for b in config.bots] == [f"{path}:4", f"{path}:8", f"{path}:14"]
    # Where a bot was given is not part of what it is.
    assert config == load_league(write(tmp_path, path.read_text().replace("\n\n", "\n")))
    inline = write(tmp_path, 'bots = [{ name = "a", command = "./a" },\n'
                             '        { name = "b", command = "./b" }]\n')
    assert [b.origin for b in load_league(inline).bots] == [f"{inline}:1"] * 2


def test_default_concurrency_is_the_cpus_this_process_may_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert available_cpus() == len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    assert available_cpus() == 1
    assert load_league(write(tmp_path, TWO_BOTS)).concurrency == 1
    monkeypatch.delattr(os, "sched_getaffinity")  # as on macOS
    monkeypatch.setattr(os, "cpu_count", lambda: 12)
    assert available_cpus() == 12


def test_bot_arguments_from_the_command_line() -> None:
    named = parse_bot_arg("fast=python bot.py --level=3", 0)
    assert named.name == "fast"
    assert named.command.argv == (sys.executable, "bot.py", "--level=3")
    unnamed = parse_bot_arg("python sample_bots/random_bot.py 1", 1)
    assert unnamed.name == "random_bot"
    assert (named.origin, unnamed.origin) == ("argument 1", "argument 2")
    assert parse_bot_arg("old=./bot", 1, "OLD").origin == "OLD"
    assert parse_bot_arg("far=remote", 0, "NEW").origin == "NEW"
    # An "=" inside a command is not a name.
    assert parse_bot_arg("./bot --level=3", 2).command.argv == ("./bot", "--level=3")
    with pytest.raises(SettingsError, match="bot 4"):
        parse_bot_arg("", 3)


@pytest.mark.parametrize("word", ["python", "python3", "node", "bash", "java"])
def test_an_interpreter_alone_is_a_command_split_by_the_shell(word: str) -> None:
    """``match python my_bot.py``: say at once that each bot is one argument."""
    with pytest.raises(SettingsError) as error:
        parse_bot_arg(word, 0)
    assert str(error.value) == (
        f"bot 1: {word!r} alone is an interpreter with no program to run; each bot is one"
        f' argument: quote its command, e.g. "{word} my_bot.py"'
    )
    assert parse_bot_arg(f"{word} my_bot.py", 0).name == "my_bot"


def test_hand_size_is_checked_against_the_table_size(tmp_path: Path) -> None:
    """players x hand_size must leave a colored card to lead: 103 cards for the hands."""
    bots = "".join(f'[[bots]]\nname = "b{i}"\ncommand = "./b{i}"\n' for i in range(10))

    def league(table_size: int, hand_size: int) -> Path:
        return write(tmp_path, f"[league]\ntable_size = {table_size}\n"
                               f"[rules]\nhand_size = {hand_size}\n{bots}")

    assert load_league(league(3, 34)).match.rules.hand_size == 34
    assert load_league(league(10, 10)).match.rules.hand_size == 10
    for table_size, hand_size in ((3, 35), (10, 11), (10, 12)):
        path = league(table_size, hand_size)
        with pytest.raises(SettingsError) as info:
            load_league(path)
        assert str(info.value).startswith(f"{path}:4: [rules] hand_size: hand_size {hand_size}"
                                          f" is too large for {table_size} players")
        assert str(info.value).endswith(f"[league] table_size is {table_size}")


def test_a_missing_cwd_is_left_to_the_bot_check(tmp_path: Path) -> None:
    """A directory that does not exist here may exist where the bots run (a Dask
    worker); one with a file in its way never does."""
    config = load_league(write(tmp_path, TWO_BOTS.replace(
        'name = "random"\n', 'name = "random"\ncwd = "absent/dir"\n')))
    assert config.bots[1].local_command().cwd == str(tmp_path / "absent/dir")
    (tmp_path / "absent").write_text("")
    with pytest.raises(SettingsError, match=r"league.toml:7: \[\[bots\]\] #2 cwd: 'absent/dir':"
                                            r" .*absent is a file, not a directory"):
        load_league(tmp_path / "league.toml")


def test_directory_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert directory_error(tmp_path) is None
    assert directory_error(tmp_path / "new" / "deeper") is None
    assert directory_error(tmp_path / "file") == "it is a file, not a directory"
    assert directory_error(tmp_path / "file" / "x") == (
        f"{tmp_path / 'file'} is a file, not a directory"
    )
    assert directory_error(tmp_path / "dangling") == "it is a broken symbolic link"
    assert directory_error(tmp_path / "dangling" / "x") == (
        f"{tmp_path / 'dangling'} is a broken symbolic link"
    )
    assert directory_error(Path("/dev/null")) == "it is not a directory"
    assert directory_error(tmp_path / "a\0b") == "the path contains a NUL character (\\u0000)"


def test_bad_commands_and_environments_from_the_command_line() -> None:
    with pytest.raises(SettingsError, match=r"^bot 2: the command contains a NUL character"):
        parse_bot_arg("x=python bot.py\0", 1)
    for env, problem in (({"A=B": "x"}, "variable name 'A=B' cannot contain '='"),
                         ({"": "x"}, "needs a name"),
                         ({"A": "x\0"}, "the value of A contains a NUL")):
        assert env_error(env) is not None and problem in str(env_error(env))
        with pytest.raises(ValueError, match=f"^env: .*{problem}"):
            make_command("python bot.py", env=env)
    assert env_error({"LEVEL": "3", "EMPTY": ""}) is None


def test_sandbox_and_enforced_limits_in_a_league_file(tmp_path: Path) -> None:
    config = load_league(write(tmp_path, """\
        [league]
        sandbox = true
        sandbox_bind = ["data"]

        [[bots]]
        name = "a"
        command = "./a"
        limits = { memory_mb = 256, pids = 64, cpu_percent = 50 }

        [[bots]]
        name = "b"
        command = "./b"
        sandbox_bind = ["b-data", "/opt/models"]

        [[bots]]
        name = "c"
        command = "./c"
        sandbox = false
        """))
    a, b, c = (bot.local_command() for bot in config.bots)
    assert a.sandbox == Sandbox(binds=(str(tmp_path / "data"),))  # the league's default
    assert b.sandbox == Sandbox(binds=(str(tmp_path / "b-data"), "/opt/models"))
    assert c.sandbox is None
    assert (a.limits.memory_mb, a.limits.pids, a.limits.cpu_percent) == (256, 64, 50)
    assert a.limits.hard() == HardLimits(memory_mb=256, pids=64, cpu_percent=50)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('[league]\nsandbox = "yes"\n', 2, "sandbox: must be true or false"),
        ('[league]\nsandbox_bind = "data"\nsandbox = true\n', 2, "must be a list of path"),
        ('[league]\nsandbox_bind = ["data"]\n', 2, "sandbox_bind: needs sandbox = true"),
        ('[league]\n\n[[bots]]\nname = "a"\ncommand = "./a"\nlimits = { pids = 0 }\n', 6,
         "pids must be positive"),
    ],
)
def test_bad_sandbox_settings_name_their_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = tmp_path / "league.toml"
    path.write_text(text + '\n[[bots]]\nname = "x"\ncommand = "./x"\n\n[[bots]]\nname = "y"\n'
                    'command = "./y"\n')
    with pytest.raises(SettingsError) as caught:
        load_league(path)
    assert str(caught.value).startswith(f"{path}:{line}: ") and message in str(caught.value)


def test_rating_model_is_either_model_and_does_not_change_the_league(tmp_path: Path) -> None:
    base = load_league(write(tmp_path, ISSUE_EXAMPLE))
    for model in ("bradley-terry", "plackett-luce"):
        text = ISSUE_EXAMPLE.replace("seed = 5", f'seed = 5\nrating_model = "{model}"')
        config = load_league(write(tmp_path, text))
        assert config.rating_model == model
        # Rating the games another way leaves them the same games.
        assert config.identity() == base.identity()
    text = ISSUE_EXAMPLE.replace("seed = 5", 'seed = 5\nrating_model = "Plackett-Luce"')
    with pytest.raises(SettingsError) as info:
        load_league(write(tmp_path, text))
    message = str(info.value)
    assert '[league] rating_model: must be "bradley-terry" or "plackett-luce"' in message
    assert "\n" not in message
