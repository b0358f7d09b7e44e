"""A league file and a competition file that set every key they may hold read as the
values they always did: the league's match settings, time control and rules gathered in
its MatchSettings, the competition's sections each as their class. The league's
identity (what its database is bound to) is the same text as before."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import attrs
import pytest

from referee.competition.config import (
    CompetitionConfig,
    CompetitionSection,
    LadderSection,
    SandboxSection,
    SubmissionSection,
    load_competition,
)
from referee.config.errors import SettingsError
from referee.config.settings import LeagueConfig, load_league
from referee.core.clock import TimeBasis, TimeControl
from referee.core.faults import FaultPolicy
from referee.core.outcomes import MatchSettings
from referee.rules import RULES_REVISION, Rules

LEAGUE = """\
[league]
table_size = 3
deals = 4
seed = 77
concurrency = 3
rules = "super-taki-classic"
replay_dir = "replays"
restart = false
fault_policy = "strikes"
strikes = 5
executor = "local"
deals_per_process = 2
format = "series"
series_games = 4
workers = 2
rating_model = "plackett-luce"
void_replays = 1
starved_cap = 50
sandbox = true
sandbox_bind = ["data"]

[time]
move_ms = 700
bank_ms = 9000
increment_ms = 50
reaction_ms = 400
startup_ms = 3000
grace_ms = 20
time_basis = "wall"

[rules]
voluntary_draw = true
hand_size = 7
action_limit = 1500
scoring = { colored_action = 12, colorless = 25 }

[[bots]]
name = "a"
version = 2
command = ["python3", "a.py"]
cwd = "bots"
env = { X = "1" }
limits = { memory_mb = 256, pids = 32 }

[[bots]]
name = "b"
command = "python3 b.py"
sandbox = false

[[bots]]
name = "c"
command = "python3 c.py"
"""

COMPETITION = """\
[competition]
name = "autumn cup"
rules = "super-taki-classic"
organizer_token_file = "org.token"
files = "files"
requests_per_second = 7
request_burst = 70
logs_mb = 900
bot_logs_mb = 90

[ladder]
table_sizes = [2, 4]
deals = 3
placement_games = 7
concurrency = 3
workers = 2
seed = 11
dask = "127.0.0.1:8786"

[sandbox]
memory_mb = 300
pids = 40
cpu_percent = 50
tmp_mb = 32
build_seconds = 100
build_memory_mb = 700
build_pids = 99
build_disk_mb = 128
check_seconds = 200

[submissions]
max_upload_mb = 10
max_unpacked_mb = 50
max_files = 400
per_day = 9
max_pending = 3
active_bots = 2
concurrent_builds = 2
unpacked_mb_per_day = 600
concurrent_unpacks = 2
concurrent_uploads = 3
min_free_mb = 100

[time]
move_ms = 600
bank_ms = 8000
increment_ms = 30
reaction_ms = 500
startup_ms = 4000
grace_ms = 15
time_basis = "wall"

[rules]
voluntary_draw = true
hand_size = 7
"""


def known_keys(load: object, path: Path, text: str, section: str) -> set[str]:
    """The keys the reader knows in ``[section]``, as its message for an unknown key
    lists them."""
    path.write_text(text.replace(f"[{section}]\n", f"[{section}]\nno_such_key = 1\n", 1))
    with pytest.raises(SettingsError) as caught:
        load(path)  # type: ignore[operator]
    found = re.search(r"known: ([^)]*)\)", str(caught.value))
    assert found is not None, caught.value
    return set(found.group(1).split(", "))


def keys_written(text: str, section: str) -> set[str]:
    body = text.split(f"[{section}]\n", 1)[1].split("\n[", 1)[0]
    return {line.split(" = ")[0] for line in body.splitlines() if " = " in line}


@pytest.fixture
def league_path(tmp_path: Path) -> Path:
    (tmp_path / "bots").mkdir()
    return tmp_path / "league.toml"


def test_the_league_file_sets_every_league_and_time_key(league_path: Path) -> None:
    for section in ("league", "time"):
        assert keys_written(LEAGUE, section) == known_keys(load_league, league_path, LEAGUE,
                                                           section)


def test_a_league_file_with_every_key_reads_as_before(league_path: Path) -> None:
    league_path.write_text(LEAGUE)
    config = load_league(league_path)
    rules = Rules.preset("super-taki-classic", voluntary_draw=True, hand_size=7,
                         action_limit=1500,
                         scoring={"colored_action": 12, "colorless": 25})
    time = TimeControl(move_ms=700, bank_ms=9000, increment_ms=50, reaction_ms=400,
                       startup_ms=3000, grace_ms=20, time_basis=TimeBasis.WALL)
    match = MatchSettings(rules=rules, time=time, fault_policy=FaultPolicy.STRIKES,
                          strikes=5, restart=False, void_replays=1, starved_cap=50,
                          replay_dir=league_path.parent / "replays")
    assert attrs.evolve(config, bots=()) == LeagueConfig(
        path=league_path, bots=(), match=match, table_size=3, deals=4, seed=77,
        concurrency=3, executor="local", deals_per_process=2, format="series",
        series_games=4, workers=2, rating_model="plackett-luce")
    assert config.match.log_dir is None and config.match.master_seed is None
    assert config.identity() == (
        "table_size=3;seed=77;format=series;series_games=4;rules=[('action_limit', 1500),"
        " ('crazy_card', False), ('deck', 'super-taki-classic'), ('hand_size', 7),"
        " ('last_card_penalty', 4), ('name', 'super-taki-classic'), ('plus3_rule', False),"
        " ('pyramid', False), ('scoring', {'colored_action': 12, 'colorless': 25}),"
        f" ('voluntary_draw', True)];rules_revision={RULES_REVISION}")
    a, b, c = config.bots
    assert (a.name, b.name, c.name) == ("a@2", "b", "c")
    assert a.command is not None and b.command is not None and c.command is not None
    assert a.command.cwd == str(league_path.parent / "bots")
    assert a.command.env == {"X": "1"}
    assert (a.command.limits.memory_mb, a.command.limits.pids) == (256, 32)
    assert a.command.sandbox is not None
    assert a.command.sandbox.binds == (str(league_path.parent / "data"),)
    assert b.command.sandbox is None and c.command.sandbox == a.command.sandbox


def test_a_league_file_with_no_keys_reads_the_defaults(league_path: Path) -> None:
    league_path.write_text(textwrap.dedent("""\
        [[bots]]
        name = "a"
        command = "python3 a.py"
        [[bots]]
        name = "b"
        command = "python3 b.py"
        """))
    config = load_league(league_path)
    assert config.match == MatchSettings()
    assert attrs.evolve(config, bots=()) == LeagueConfig(
        path=league_path, bots=(), concurrency=config.concurrency)


def test_the_competition_file_sets_every_key(tmp_path: Path) -> None:
    path = tmp_path / "competition.toml"
    for section in ("competition", "ladder", "sandbox", "submissions", "time"):
        assert keys_written(COMPETITION, section) == known_keys(load_competition, path,
                                                                COMPETITION, section)


def test_a_competition_file_with_every_key_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "competition.toml"
    path.write_text(COMPETITION)
    config = load_competition(path)
    assert config == CompetitionConfig(
        path=path,
        competition=CompetitionSection(name="autumn cup", rules="super-taki-classic",
                                       organizer_token_file="org.token", files="files",
                                       requests_per_second=7, request_burst=70,
                                       logs_mb=900, bot_logs_mb=90),
        ladder=LadderSection(table_sizes=(2, 4), deals=3, placement_games=7, concurrency=3,
                             workers=2, seed=11, dask="127.0.0.1:8786"),
        sandbox=SandboxSection(memory_mb=300, pids=40, cpu_percent=50, tmp_mb=32,
                               build_seconds=100, build_memory_mb=700, build_pids=99,
                               build_disk_mb=128, check_seconds=200),
        submissions=SubmissionSection(max_upload_mb=10, max_unpacked_mb=50, max_files=400,
                                      per_day=9, max_pending=3, active_bots=2,
                                      concurrent_builds=2, unpacked_mb_per_day=600,
                                      concurrent_unpacks=2, concurrent_uploads=3,
                                      min_free_mb=100),
        time=TimeControl(move_ms=600, bank_ms=8000, increment_ms=30, reaction_ms=500,
                         startup_ms=4000, grace_ms=15, time_basis=TimeBasis.WALL),
        rules=Rules.preset("super-taki-classic", voluntary_draw=True, hand_size=7),
    )
    assert type(config.ladder.table_sizes) is tuple
    assert config.time.time_basis is TimeBasis.WALL
