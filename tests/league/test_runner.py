"""Leagues with real sample bots: game counts, ratings, resuming, and surviving SIGKILL."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import psutil
import pytest
import trio
from jsonout import strict_json
from processes import deal_memory_command, league_deal, pids_with_a_deal_twice
from schedules import round_robin

from referee.config.settings import load_league
from referee.core.replay import Replay, verify
from referee.core.schedule import derive_seed
from referee.league.rating_input import rated_games
from referee.league.runner import (
    MAX_DEALS_PER_UNIT,
    deals_per_unit,
    league_size,
    pending_units,
    run_league,
    with_seed,
)
from referee.league.store import ResultStore, StoreError
from referee.ratings.leaderboard import rate

REPO = Path(__file__).resolve().parents[2]
GREEDY = f"python {REPO / 'sample_bots' / 'greedy_bot.py'}"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'}"
REFEREE = Path(sys.executable).with_name("taki-referee")


def league_file(tmp_path: Path, *, deals: int, seed: int = 1, marker: str = "",
                extra_bots: str = "") -> Path:
    env = f'env = {{ TAKI_TEST_MARKER = "{marker}" }}' if marker else ""
    path = tmp_path / "league.toml"
    path.write_text(f"""\
[league]
table_size = 2
deals = {deals}
seed = {seed}
concurrency = 2

[time]
move_ms = 1000
bank_ms = 10000
increment_ms = 100

[[bots]]
name = "greedy"
command = "{GREEDY}"
{env}

[[bots]]
name = "random1"
command = "{RANDOM} 1"
{env}

[[bots]]
name = "random2"
command = "{RANDOM} 2"
{env}
{extra_bots}
""")
    return path


@pytest.mark.slow
async def test_small_league_rates_the_strong_bot_first(tmp_path: Path) -> None:
    config = load_league(league_file(tmp_path, deals=5))
    config = attrs.evolve(config, match=attrs.evolve(config.match,
                                                     replay_dir=tmp_path / "replays"))
    assert league_size(config) == 3 * 5 * 2
    with ResultStore(tmp_path / "r.sqlite") as store:
        played = await run_league(config, store, log_dir=tmp_path / "logs")
        assert played == store.game_count() == 30
        # Running it again finds nothing to do.
        assert await run_league(config, store, log_dir=tmp_path / "logs") == 0
        assert store.game_count() == 30
        games = list(store.games())
        assert store.forfeit_counts() == {}
        report = rate(rated_games(store), resamples=50, seed=0)
    assert report.bots[0].name == "greedy"
    assert report.bots[0].score > 0.5
    assert {b.name: b.games for b in report.bots} == {"greedy": 20, "random1": 20, "random2": 20}
    # Duplicate format: every game of a block has the same deck seed and all seats.
    blocks: dict[str, list[int]] = {}
    for g in games:
        blocks.setdefault(g.block, []).append(g.seed)
        assert sorted(s.seat for s in g.seats) == [0, 1]
        assert sorted(s.place for s in g.seats) == [1, 2]
    assert len(blocks) == 15
    assert all(len(seeds) == 2 and len(set(seeds)) == 1 for seeds in blocks.values())
    # Every game's replay re-plays to the result stored for it.
    for g in games:
        assert g.replay is not None
        result = verify(Replay.load(Path(g.replay)))
        assert [s.place for s in sorted(g.seats, key=lambda s: s.seat)] == list(result.places)


def crash_league(tmp_path: Path, deals: int) -> Path:
    """A league of the greedy bot and a bot that exits with status 3 at once."""
    path = tmp_path / "crash.toml"
    path.write_text(f"""\
[league]
deals = {deals}
concurrency = 1
[[bots]]
name = "greedy"
command = "{GREEDY}"
[[bots]]
name = "crasher"
command = "python -c 'import sys; sys.exit(3)'"
""")
    return path


async def test_forfeits_are_counted(tmp_path: Path) -> None:
    config = load_league(crash_league(tmp_path, deals=2))
    with ResultStore(tmp_path / "r.sqlite") as store:
        await run_league(config, store, log_dir=tmp_path / "logs")
        assert store.game_count() == 4
        assert store.forfeit_counts() == {"crasher": {"crash": 4}}
        report = rate(rated_games(store), resamples=0)
    assert [b.name for b in report.bots] == ["greedy", "crasher"]


def test_pending_units_are_the_units_with_a_game_to_play(tmp_path: Path) -> None:
    config = load_league(league_file(tmp_path, deals=2))
    units = list(pending_units(config, set(), deals=2))
    everything = [g.game_id for unit in units for g in unit.games]
    assert sorted(everything) == sorted(
        g.game_id for block in round_robin(["greedy", "random1", "random2"], 2, 2, 1)
        for g in block
    ) and len(everything) == league_size(config) == 12
    # A unit with a game left is played whole (its stored games only replayed); a unit
    # whose every game is stored vanishes. The units themselves never change.
    done = {units[0].games[0].game_id, *(g.game_id for g in units[1].games)}
    remaining = list(pending_units(config, done, deals=2))
    assert remaining == [units[0], *units[2:]]


def test_a_unit_of_work_is_one_rotation_of_one_table(tmp_path: Path) -> None:
    config = load_league(league_file(tmp_path, deals=5))
    units = list(pending_units(config, set(), deals=2))
    for unit in units:
        assert len({frozenset(g.seats) for g in unit.games}) == 1  # one table
        assert len({g.rotation for g in unit.games}) == 1  # one rotation
        assert len({g.deal for g in unit.games}) == len(unit.games) <= 2  # each deal once
    # Three bots in pairs: three tables of five deals, in runs of two, two and one
    # deal, each run once per rotation.
    assert [len(unit.games) for unit in units] == [2, 2, 2, 2, 1, 1] * 3
    assert units[0].name == "greedy,random1/deals0-1/rot0"
    assert units[1].name == "greedy,random1/deals0-1/rot1"


def test_deals_per_unit_keeps_every_place_busy_whatever_the_concurrency(
    tmp_path: Path,
) -> None:
    config = load_league(league_file(tmp_path, deals=6))
    tables = len(config.bots) * (len(config.bots) - 1) // 2
    per_unit = deals_per_unit(config)
    assert 1 <= per_unit <= config.deals
    assert tables * config.table_size * config.deals / per_unit >= 2 * config.concurrency
    for concurrency in (1, 2, 16):
        assert deals_per_unit(attrs.evolve(config, concurrency=concurrency)) == per_unit


@pytest.mark.slow
def test_a_huge_league_is_played_in_small_units(tmp_path: Path) -> None:
    # Sized from the league alone, a unit of this league would hold 187 million deals.
    # Without the cap, building that first unit takes hours and far more memory than
    # the machine has.
    config = load_league(league_file(tmp_path, deals=10**9))
    assert deals_per_unit(config) == MAX_DEALS_PER_UNIT
    unit = next(pending_units(config, set()))
    assert len(unit.games) == MAX_DEALS_PER_UNIT
    assert [g.deal for g in unit.games] == list(range(MAX_DEALS_PER_UNIT))
    # An explicit deals_per_process is taken as given.
    explicit = attrs.evolve(config, deals_per_process=1000)
    assert deals_per_unit(explicit) == 1000


async def test_a_database_holds_one_league(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    config = load_league(league_file(tmp_path, deals=1))
    with ResultStore(db) as store:
        store.bind("league", config.identity())
    other = load_league(league_file(tmp_path, deals=1, seed=2))
    with ResultStore(db) as store:
        with pytest.raises(StoreError, match="seed: 1 in the database, 2 now"):
            await run_league(other, store, log_dir=tmp_path / "logs")
        assert store.game_count() == 0


# ------------------------------------------------------------------- SIGKILL


def marked_processes(marker: str) -> list[psutil.Process]:
    """Live processes started with TAKI_TEST_MARKER=marker in their environment."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if proc.status() != psutil.STATUS_ZOMBIE and (
                proc.environ().get("TAKI_TEST_MARKER") == marker
            ):
                found.append(proc)
    return found


def count_games(db: Path) -> int:
    """Games in the database, read without disturbing the referee that writes it."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


@contextlib.contextmanager
def referee(*args: str, cwd: Path) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [str(REFEREE), *args], cwd=cwd, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    with proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.mark.slow
def test_sigkill_loses_only_games_in_flight(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    path = league_file(tmp_path, deals=6, marker=marker)
    db = tmp_path / "league.sqlite"
    total = league_size(load_league(path))
    args = ("league", str(path), "--db", str(db), "--log-dir", str(tmp_path / "logs"), "--json")

    with referee(*args, cwd=tmp_path) as first:
        deadline = time.monotonic() + 60
        while count_games(db) < 4:
            assert first.poll() is None, first.stderr.read() if first.stderr else ""
            assert time.monotonic() < deadline, "the league did not record any game"
            time.sleep(0.02)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    killed_at = count_games(db)
    assert 4 <= killed_at < total

    # The bots run in sessions of their own; with the referee gone they see the end of
    # their input and exit.
    deadline = time.monotonic() + 10
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked_processes(marker) == []

    with contextlib.closing(sqlite3.connect(db)) as con:
        # Whatever was committed is whole: every stored game has both of its seats.
        assert con.execute(
            "SELECT COUNT(*) FROM games WHERE game_id NOT IN "
            "(SELECT game_id FROM seats GROUP BY game_id HAVING COUNT(*) = 2)"
        ).fetchone() == (0,)

    with referee(*args, cwd=tmp_path) as second:
        out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err.decode()
    report = json.loads(out)
    assert report["games"] == total

    with contextlib.closing(sqlite3.connect(db)) as con:
        ids = [row[0] for row in con.execute("SELECT game_id FROM games")]
        assert len(ids) == len(set(ids)) == total
        expected = {g.game_id for unit in pending_units(load_league(path), set())
                    for g in unit.games}
        assert set(ids) == expected
        assert con.execute("SELECT COUNT(*) FROM seats").fetchone() == (2 * total,)
        assert con.execute(
            "SELECT COUNT(*) FROM seats WHERE game_id NOT IN (SELECT game_id FROM games)"
        ).fetchone() == (0,)
        assert con.execute(
            "SELECT COUNT(*) FROM (SELECT game_id, seat FROM seats "
            "GROUP BY game_id, seat HAVING COUNT(*) > 1)"
        ).fetchone() == (0,)
    assert marked_processes(marker) == []

    # The --json report of the finished league.
    assert set(report) == {"games", "ratings", "forfeits", "seed", "voided", "void_plays"}
    assert report["voided"] == 0
    assert report["forfeits"] == {} and report["seed"] == load_league(path).seed
    # (Who leads is checked by the deterministic league above: a seeded random bot
    # restarted in the middle of a block plays other moves than an uninterrupted one.)
    assert {r["bot"] for r in report["ratings"]} == {"greedy", "random1", "random2"}
    elos = [r["elo"] for r in report["ratings"]]
    assert elos == sorted(elos, reverse=True)
    for row in report["ratings"]:
        assert set(row) >= {"bot", "elo", "ci95", "games", "score"}
        low, high = row["ci95"]
        assert low <= row["elo"] <= high
        assert row["games"] == 2 * 6 * 2  # two tables, six deals, two seats
    assert abs(sum(r["elo"] for r in report["ratings"]) / 3 - 1500) < 0.5


def test_league_cli_reports_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[league]\ndeals = 2\ntable_size = 12\n'
                    '[[bots]]\nname = "a"\ncommand = "x"\n[[bots]]\nname = "b"\ncommand = "y"\n')
    result = subprocess.run(
        [str(REFEREE), "league", str(path), "--db", str(tmp_path / "r.sqlite")],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )
    assert result.returncode == 2
    # The whole message, brackets included, on one line.
    assert f"{path}:3: [league] table_size: must be between 2 and 10" in result.stderr
    assert "Traceback" not in result.stderr


def league_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(REFEREE), "league", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def test_league_with_a_missing_bot_binary(tmp_path: Path) -> None:
    # A typo in a script's name, and a missing executable listed last: both are found
    # before the first game, each named with its line.
    path = league_file(tmp_path, deals=1, extra_bots=f"""\
[[bots]]
name = "typo"
command = "python {REPO / 'sample_bots' / 'greedy_bott.py'}"

[[bots]]
name = "ghost"
command = "no-such-bot-binary --fast"
""")
    db = tmp_path / "r.sqlite"
    result = league_cli(str(path), "--db", str(db), "--log-dir", str(tmp_path / "logs"),
                        cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = path.read_text().splitlines()
    typo_line = lines.index('name = "typo"')  # the [[bots]] line above it, 1-based
    ghost_line = lines.index('name = "ghost"')
    err = result.stderr
    assert (f"taki-referee: {path}:{typo_line}: bot 'typo' failed the bot check: exited"
            " with status 2 before its handshake") in err
    assert "greedy_bott.py': [Errno 2] No such file or directory" in err
    assert (f"taki-referee: {path}:{ghost_line}: bot 'ghost' failed the bot check:"
            " executable 'no-such-bot-binary' not found") in err
    assert "command: no-such-bot-binary --fast" in err
    assert err.count("taki-referee:") == 2
    assert "Traceback" not in err
    # Nothing stored, not even the games of the tables whose bots are fine.
    assert not db.exists()
    assert not (tmp_path / "logs").exists()


def test_relative_commands_run_from_another_directory(tmp_path: Path) -> None:
    # The demo league's commands are relative to the repository root.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    league = elsewhere / "league.toml"
    league.write_text((REPO / "examples" / "demo.toml").read_text())
    result = league_cli("league.toml", "--db", "r.sqlite", cwd=elsewhere)
    assert result.returncode == 2, result.stderr
    err = result.stderr
    for bot in ("greedy", "random", "random-2"):
        assert f"bot '{bot}' failed the bot check: exited with status 2 before its" in err
    assert "taki-referee: league.toml:16: bot 'greedy'" in err
    assert f"working directory: {elsewhere}" in err
    assert f"can't open file '{elsewhere / 'sample_bots' / 'greedy_bot.py'}'" in err
    assert not (elsewhere / "r.sqlite").exists()
    # From the repository root the same file plays.
    result = league_cli(str(league), "--db", str(tmp_path / "r.sqlite"), "--json",
                        "--log-dir", str(tmp_path / "logs"), cwd=REPO)
    assert result.returncode == 0, result.stderr


def test_no_bot_check_lets_a_broken_bot_forfeit(tmp_path: Path) -> None:
    path = crash_league(tmp_path, deals=1)
    db = tmp_path / "r.sqlite"
    args = (str(path), "--db", str(db), "--json", "--log-dir", str(tmp_path / "logs"))
    result = league_cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert "bot 'crasher' failed the bot check: exited with status 3" in result.stderr
    assert not db.exists()
    result = league_cli(*args, "--no-bot-check", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = strict_json(result.stdout)
    assert report["forfeits"] == {"crasher": {"crash": 2}}


@pytest.mark.slow
def test_league_rating_options(tmp_path: Path) -> None:
    path = league_file(tmp_path, deals=2)
    db = tmp_path / "r.sqlite"
    common = ("--db", str(db), "--json", "--log-dir", str(tmp_path / "logs"))
    # A bad option stops the league before any game.
    result = league_cli(str(path), *common, "--anchor", "nobody", cwd=tmp_path)
    assert result.returncode == 2
    assert "--anchor nobody: not a bot of the league (its bots: greedy, random1, random2)" \
        in result.stderr
    result = league_cli(str(path), *common, "--prior", "-1", cwd=tmp_path)
    assert result.returncode == 2 and "--prior must be" in result.stderr
    assert not db.exists()

    result = league_cli(str(path), *common, "--anchor", "random1", "--anchor-elo", "1000",
                        cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = strict_json(result.stdout)
    assert report["games"] == 12
    assert {r["bot"]: r["elo"] for r in report["ratings"]}["random1"] == 1000
    # The same figures as `ratings` with the same options, with and without a prior.
    for options in (["--prior", "0.5"], ["--prior", "3", "--anchor", "greedy"]):
        league = league_cli(str(path), *common, *options, cwd=tmp_path)
        assert league.returncode == 0, league.stderr
        ratings = subprocess.run([str(REFEREE), "ratings", str(db), "--json", *options],
                                 capture_output=True, text=True, timeout=60)
        assert ratings.returncode == 0, ratings.stderr
        expected = strict_json(ratings.stdout)
        del expected["los"]
        assert strict_json(league.stdout) == {**expected, "seed": 1}


@pytest.mark.slow
async def test_deals_per_process_bounds_what_one_bot_process_plays(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    counting = tmp_path / "counting_bot.py"
    counting.write_text(
        f"import runpy, sys\nopen({str(starts)!r}, 'a').write('x')\n"
        f"sys.argv = [{str(REPO / 'sample_bots' / 'random_bot.py')!r}, '5']\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    text = league_file(tmp_path, deals=5, extra_bots=f"""\
[[bots]]
name = "counting"
command = "python {counting}"
""").read_text()
    for concurrency in (1, 8):
        path = tmp_path / f"league{concurrency}.toml"
        path.write_text(text.replace("concurrency = 2", f"concurrency = {concurrency}\n"
                                                       "deals_per_process = 2"))
        config = load_league(path)
        assert deals_per_unit(config) == 2  # whatever the concurrency
        units = list(pending_units(config, set()))
        assert all(len({g.deal for g in unit.games}) <= 2 for unit in units)
    # Three tables with the counting bot, five deals each in runs of 2, 2 and 1 deals,
    # each run once per rotation: eighteen units, so eighteen processes of the bot.
    starts.write_text("")
    with ResultStore(tmp_path / "r.sqlite") as store:
        played = await run_league(config, store, log_dir=None)
        assert store.forfeit_counts() == {}
    assert played == league_size(config) == 6 * 5 * 2
    assert starts.read_text() == "x" * 18
    # At most the league's deals.
    path.write_text(text.replace("concurrency = 2", "deals_per_process = 50"))
    assert deals_per_unit(load_league(path)) == 5


# ------------------------------------------------- no deal memory, same games on resume


@pytest.mark.slow
async def test_no_bot_process_plays_two_games_of_one_deal(tmp_path: Path) -> None:
    log = tmp_path / "pids.log"
    path = league_file(tmp_path, deals=4, extra_bots=f"""\
[[bots]]
name = "memory1"
command = "{deal_memory_command(log)}"

[[bots]]
name = "memory2"
command = "{deal_memory_command(log)}"
""")
    config = load_league(path)
    with ResultStore(tmp_path / "r.sqlite") as store:
        assert await run_league(config, store, log_dir=None) == league_size(config)
    assert pids_with_a_deal_twice(log, league_deal) == {}
    games = log.read_text().splitlines()
    assert len(games) == 2 * 4 * 4 * 2  # two bots, four tables each, four deals, two seats
    # Processes are still reused: each plays a unit of several deals.
    assert len({line.split()[0] for line in games}) < len(games)


def run(*args: str, cwd: Path) -> None:
    """The installed command to its end, which must be a success."""
    done = subprocess.run([str(REFEREE), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)
    assert done.returncode == 0, done.stderr


def league_results(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with contextlib.closing(sqlite3.connect(db)) as con:
        rows = con.execute(
            "SELECT g.game_id, g.actions, g.reason, s.seat, s.bot, s.place, s.points"
            " FROM games g JOIN seats s ON s.game_id = g.game_id ORDER BY g.game_id, s.seat"
        ).fetchall()
    out: dict[str, list[tuple[Any, ...]]] = {}
    for game_id, *rest in rows:
        out.setdefault(game_id, []).append(tuple(rest))
    return out


@pytest.mark.slow
def test_a_league_killed_and_resumed_stores_what_an_uninterrupted_one_does(
    tmp_path: Path,
) -> None:
    # Seeded random bots choose by their process's history: the results are the same
    # only if a resumed league starts its processes where an uninterrupted one does.
    text = f"""\
[league]
table_size = 2
deals = 12
seed = 4
concurrency = 2

[time]
move_ms = 2000
bank_ms = 20000
increment_ms = 200

[[bots]]
name = "random1"
command = "{RANDOM} 1"

[[bots]]
name = "random2"
command = "{RANDOM} 2"

[[bots]]
name = "random3"
command = "{RANDOM} 3"
"""
    path = tmp_path / "league.toml"
    path.write_text(text)
    total = league_size(load_league(path))
    whole, resumed = tmp_path / "whole.sqlite", tmp_path / "resumed.sqlite"
    run("league", str(path), "--db", str(whole), "--log-dir", str(tmp_path / "logs"),
        cwd=tmp_path)
    args = ("league", str(path), "--db", str(resumed), "--log-dir", str(tmp_path / "logs"))
    with referee(*args, cwd=tmp_path) as first:
        deadline = time.monotonic() + 60
        while count_games(resumed) < total // 3:
            assert first.poll() is None, first.stderr.read() if first.stderr else ""
            assert time.monotonic() < deadline, "the league did not record any game"
            time.sleep(0.02)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert count_games(resumed) < total
    run("league", str(path), "--db", str(resumed), "--log-dir", str(tmp_path / "logs"),
        cwd=tmp_path)
    expected = league_results(whole)
    assert len(expected) == total
    assert league_results(resumed) == expected


async def test_a_league_without_seed_gets_a_fresh_one_that_its_database_keeps(
    tmp_path: Path,
) -> None:
    path = league_file(tmp_path, deals=1)
    path.write_text("\n".join(line for line in path.read_text().splitlines()
                              if not line.startswith("seed")))
    config = load_league(path)
    assert config.seed is None
    seeds = []
    for name in ("a.sqlite", "b.sqlite"):
        with ResultStore(tmp_path / name) as store:
            await run_league(config, store, log_dir=None)
            seeds.append(with_seed(config, store).seed)
            deal_seeds = {g.seed for g in store.games()}
    assert seeds[0] != seeds[1]  # fresh for each new database, never a fixed default
    # The database keeps its seed: the league resumes (nothing is left to play) and
    # every stored game was dealt from it.
    with ResultStore(tmp_path / "b.sqlite") as store:
        assert await run_league(config, store, log_dir=None) == 0
        assert with_seed(config, store).seed == seeds[1]
        assert deal_seeds == {derive_seed(seeds[1], "deal", 0)}
    # A database given a seed by its file keeps that one too.
    seeded = load_league(league_file(tmp_path, deals=1, seed=77))
    with ResultStore(tmp_path / "c.sqlite") as store:
        assert with_seed(seeded, store).seed == 77
        assert with_seed(config, store).seed == 77


# ----------------------------------------- the referee's own I/O and its failures


def wait_for_games(proc: subprocess.Popen[bytes], db: Path, games: int) -> None:
    deadline = time.monotonic() + 60
    while count_games(db) < games:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "the league did not record its games"
        time.sleep(0.02)


def test_a_second_league_run_on_a_database_in_use_stops_at_once(tmp_path: Path) -> None:
    path = league_file(tmp_path, deals=40)
    db = tmp_path / "r.sqlite"
    args = ("league", str(path), "--db", str(db), "--log-dir", str(tmp_path / "logs"))
    with referee(*args, cwd=tmp_path) as first:
        wait_for_games(first, db, 2)
        second = subprocess.run([str(REFEREE), *args, "--no-bot-check"], capture_output=True,
                                text=True, cwd=tmp_path, timeout=60)
        assert first.poll() is None
    assert second.returncode == 2
    assert second.stderr.count("\n") == 1 and str(db) in second.stderr
    assert "in use by another league run" in second.stderr


@pytest.mark.slow
def test_sigterm_stops_a_league_as_ctrl_c_does_and_says_how_to_resume(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    path = league_file(tmp_path, deals=20, marker=marker)
    db = tmp_path / "r.sqlite"
    args = ("league", str(path), "--db", str(db), "--log-dir", str(tmp_path / "logs"))
    with referee(*args, cwd=tmp_path) as first:
        wait_for_games(first, db, 3)
        first.send_signal(signal.SIGTERM)
        _, err = first.communicate(timeout=30)
    assert first.returncode == 130, err.decode()
    stored = count_games(db)
    text = err.decode()
    assert f"{stored} games are stored in {db}" in text
    assert "run the same command again to resume" in text
    assert marked_processes(marker) == []  # every bot process was stopped
    run(*args, cwd=tmp_path)
    assert count_games(db) == league_size(load_league(path))


@pytest.mark.slow
async def test_another_program_holding_the_database_costs_no_bot_a_forfeit(
    tmp_path: Path,
) -> None:
    # Another program takes the write lock for 3 s mid-league, longer than a move may
    # take. The store waits for it in a thread; no bot's clock stops meanwhile.
    config = load_league(league_file(tmp_path, deals=6))
    db = tmp_path / "r.sqlite"
    held = trio.Event()

    def hold_the_lock() -> None:
        with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as con:
            con.execute("BEGIN IMMEDIATE")
            trio.from_thread.run_sync(held.set)
            time.sleep(3)
            con.execute("COMMIT")

    with ResultStore(db) as store:
        async with trio.open_nursery() as nursery:

            async def interfere() -> None:
                while store.game_count() < 2:
                    await trio.sleep(0.01)
                await trio.to_thread.run_sync(hold_the_lock)

            nursery.start_soon(interfere)
            played = await run_league(config, store, log_dir=tmp_path / "logs")
        assert held.is_set()
        assert played == league_size(config)
        assert store.forfeit_counts() == {}


@pytest.mark.slow
async def test_a_lock_held_past_the_busy_timeout_stops_the_league_with_no_forfeit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("referee.league.store.BUSY_TIMEOUT_MS", 500)
    config = load_league(league_file(tmp_path, deals=6))
    db = tmp_path / "r.sqlite"
    release = threading.Event()

    def hold_the_lock() -> None:
        with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as con:
            con.execute("BEGIN IMMEDIATE")
            release.wait(30)
            con.execute("COMMIT")

    with ResultStore(db) as store:
        with pytest.raises(BaseException) as caught:
            async with trio.open_nursery() as nursery:

                async def interfere() -> None:
                    while store.game_count() < 2:
                        await trio.sleep(0.01)
                    nursery.start_soon(trio.to_thread.run_sync, hold_the_lock)

                nursery.start_soon(interfere)
                try:
                    await run_league(config, store, log_dir=tmp_path / "logs")
                finally:
                    release.set()
        errors = [e for e in _leaves(caught.value) if isinstance(e, StoreError)]
        assert errors and "another program is using it" in str(errors[0])
        assert store.forfeit_counts() == {}


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def test_a_full_replay_directory_stops_the_league_with_one_line(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(disk)], check=True)
    try:
        path = league_file(tmp_path, deals=20)
        path.write_text(path.read_text().replace("[time]", 'replay_dir = "disk"\n\n[time]'))
        done = subprocess.run(
            [str(REFEREE), "league", str(path), "--db", str(tmp_path / "r.sqlite"),
             "--log-dir", str(tmp_path / "logs")],
            capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        (error,) = [line for line in done.stderr.splitlines()
                    if line.startswith("taki-referee:")]
        assert "cannot write the replay" in error and "No space left on device" in error
        assert not [p for p in disk.iterdir() if p.name.endswith(".tmp")]
    finally:
        subprocess.run(["umount", str(disk)], check=True)
