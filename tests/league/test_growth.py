"""Leagues that grow: bots added, deals raised, bots retired, new versions entered. Each
run plays only the games missing from the full schedule of the league file as it is."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from jsonout import strict_json
from schedules import round_robin

from referee.config.errors import SettingsError
from referee.config.settings import LeagueConfig, load_league
from referee.core.schedule import DealRun, ScheduledGame, total_games
from referee.core.specs import BotCommand, BotSpec
from referee.league import runner
from referee.league.runner import run_league
from referee.league.store import ResultStore, StoreError

REPO = Path(__file__).resolve().parents[2]
GREEDY = f"python {REPO / 'sample_bots' / 'greedy_bot.py'}"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'}"
REFEREE = Path(sys.executable).with_name("taki-referee")
SEED = 11


def league(tmp_path: Path, bots: dict[str, str], *, deals: int, table_size: int = 2,
           seed: int = SEED) -> Path:
    """A league file of ``bots`` (name, or name@version, to command)."""
    entries = []
    for name, command in bots.items():
        base, _, version = name.partition("@")
        entries.append(f'[[bots]]\nname = "{base}"\ncommand = "{command}"\n'
                       + (f'version = "{version}"\n' if version else ""))
    path = tmp_path / "league.toml"
    path.write_text(f"[league]\ntable_size = {table_size}\ndeals = {deals}\nseed = {seed}\n"
                    "concurrency = 2\n\n" + "\n".join(entries))
    return path


def full_schedule(bots: list[str], deals: int, table_size: int = 2) -> dict[str, tuple[
        int, tuple[str, ...]]]:
    """Every game of the league declared complete from the start: id to (seed, seats)."""
    return {game.game_id: (game.seed, game.seats)
            for block in round_robin(bots, table_size, deals, SEED) for game in block}


def stored(db: Path) -> dict[str, tuple[int, tuple[str, ...]]]:
    with ResultStore(db, readonly=True) as store:
        return {g.game_id: (g.seed, tuple(s.bot for s in sorted(g.seats, key=lambda s: s.seat)))
                for g in store.games()}


async def grow(tmp_path: Path, db: Path, bots: dict[str, str], deals: int) -> int:
    config = load_league(league(tmp_path, bots, deals=deals))
    with ResultStore(db) as store:
        return await run_league(config, store, log_dir=tmp_path / "logs")


@pytest.mark.slow
async def test_a_league_grown_twice_holds_exactly_the_full_schedule(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    two = {"greedy": GREEDY, "random1": f"{RANDOM} 1"}
    three = {**two, "random2": f"{RANDOM} 2"}
    assert await grow(tmp_path, db, two, deals=2) == 4
    first = stored(db)
    # A bot added: it plays its tables with the others, on the same deals and rotations.
    assert await grow(tmp_path, db, three, deals=2) == total_games(3, 2, 2) - 4
    after_adding = stored(db)
    assert {k: after_adding[k] for k in first} == first  # nothing stored was played again
    assert after_adding == full_schedule(list(three), 2)
    # Deals raised: every table plays the new deals only.
    assert await grow(tmp_path, db, three, deals=4) == total_games(3, 2, 4) - total_games(3, 2, 2)
    assert stored(db) == full_schedule(list(three), 4)
    with ResultStore(db, readonly=True) as store:
        assert store.game_count() == total_games(3, 2, 4) == 24
        assert store.retired() == set()
    # Nothing is missing: another run plays nothing.
    assert await grow(tmp_path, db, three, deals=4) == 0


@pytest.mark.slow
async def test_a_bot_left_out_of_the_file_is_retired_and_its_games_stay(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    three = {"greedy": GREEDY, "random1": f"{RANDOM} 1", "random2": f"{RANDOM} 2"}
    await grow(tmp_path, db, three, deals=1)
    assert await grow(tmp_path, db, {"greedy": GREEDY, "random2": f"{RANDOM} 2"}, deals=2) == 2
    with ResultStore(db, readonly=True) as store:
        assert store.retired() == {"random1"}
        assert store.game_count() == 6 + 2
    ratings = subprocess.run([str(REFEREE), "ratings", str(db), "--json"],
                             capture_output=True, text=True, check=True)
    shown = strict_json(ratings.stdout)
    assert [r["bot"] for r in shown["ratings"]] != [] and "random1" not in {
        r["bot"] for r in shown["ratings"]}
    assert shown["games"] == 8
    everyone = strict_json(subprocess.run(
        [str(REFEREE), "ratings", str(db), "--json", "--include-retired"],
        capture_output=True, text=True, check=True).stdout)
    assert {r["bot"]: r["retired"] for r in everyone["ratings"]} == {
        "greedy": False, "random1": True, "random2": False}
    text = subprocess.run([str(REFEREE), "ratings", str(db)], capture_output=True, text=True,
                          check=True).stdout
    assert "retired, not shown (--include-retired): random1" in text
    marked = subprocess.run([str(REFEREE), "ratings", str(db), "--include-retired"],
                            capture_output=True, text=True, check=True).stdout
    assert "random1 (retired)" in marked
    # Back in the file, it is an entrant again and plays the deals it missed.
    assert await grow(tmp_path, db, three, deals=2) == total_games(3, 2, 2) - 8
    with ResultStore(db, readonly=True) as store:
        assert store.retired() == set()


@pytest.mark.slow
async def test_a_new_version_is_a_new_entrant_beside_the_old_one(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    await grow(tmp_path, db, {"greedy@1": f"{RANDOM} 7", "random": f"{RANDOM} 1"}, deals=2)
    await grow(tmp_path, db, {"greedy@2": GREEDY, "random": f"{RANDOM} 1"}, deals=2)
    games = stored(db)
    assert games == {**full_schedule(["greedy@1", "random"], 2),
                     **full_schedule(["greedy@2", "random"], 2)}
    with ResultStore(db, readonly=True) as store:
        assert store.retired() == {"greedy@1"}
    everyone = strict_json(subprocess.run(
        [str(REFEREE), "ratings", str(db), "--json", "--include-retired"],
        capture_output=True, text=True, check=True).stdout)
    assert {r["bot"] for r in everyone["ratings"]} == {"greedy@1", "greedy@2", "random"}


@pytest.mark.parametrize(("change", "message"), [
    ({"seed": 12}, "seed: 11 in the database, 12 now"),
    ({"table_size": 3}, "table_size: 2 in the database, 3 now"),
])
async def test_what_changes_the_games_meaning_is_still_refused(
    tmp_path: Path, change: dict[str, int], message: str
) -> None:
    db = tmp_path / "r.sqlite"
    bots = {"greedy": GREEDY, "random1": f"{RANDOM} 1", "random2": f"{RANDOM} 2"}
    await grow(tmp_path, db, bots, deals=1)
    config = load_league(league(tmp_path, bots, deals=1, **change))
    with ResultStore(db) as store, pytest.raises(StoreError, match=message):
        await run_league(config, store)
    assert stored(db).keys() == full_schedule(list(bots), 1).keys()


# ------------------------------------------------------------------ leagues of series


@pytest.mark.slow
async def test_a_league_of_series_is_rated_by_series(tmp_path: Path) -> None:
    path = tmp_path / "series.toml"
    path.write_text(f"""\
[league]
format = "series"
series_games = 3
deals = 2
seed = {SEED}
concurrency = 2
[[bots]]
name = "greedy"
command = "{GREEDY}"
[[bots]]
name = "random1"
command = "{RANDOM} 1"
[[bots]]
name = "random2"
command = "{RANDOM} 2"
""")
    config = load_league(path)
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        played = await run_league(config, store, log_dir=tmp_path / "logs")
    # 3 tables x 2 series x 2 seatings x 3 games.
    assert played == total_games(3, 2, 2, series_length=3) == 36
    games = stored(db)
    series = [g for g in games if g.startswith("greedy,random1/series1/rot1/")]
    assert sorted(series) == [f"greedy,random1/series1/rot1/game{k}" for k in (1, 2, 3)]
    assert {games[g][1] for g in series} == {("random1", "greedy")}  # seats kept
    # Both seatings of a series play the same deals (a duplicate block).
    assert [games[f"greedy,random1/series1/rot{r}/game2"][0] for r in (0, 1)] == [
        games["greedy,random1/series1/rot0/game2"][0]] * 2
    out = strict_json(subprocess.run([str(REFEREE), "ratings", str(db), "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    assert out["games"] == 36
    # Each bot played 2 tables x 2 series x 2 seatings = 8 series, rated as 8 games.
    assert {r["bot"]: r["games"] for r in out["ratings"]} == {
        "greedy": 8, "random1": 8, "random2": 8}
    report = tmp_path / "report.html"
    subprocess.run([str(REFEREE), "report", str(db), "-o", str(report)], check=True,
                   capture_output=True)
    page = report.read_text()
    assert '<table id="series">' in page
    assert page.count("<tr><td>greedy,random1/series") == 4


def test_series_settings_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = "{GREEDY}"\n' for n in "ab")
    path.write_text("[league]\nseries_games = 3\n" + bots)
    with pytest.raises(SettingsError, match='series_games: is for format = "series" only'):
        load_league(path)
    path.write_text('[league]\nformat = "swiss"\n' + bots)
    with pytest.raises(SettingsError, match='format: must be "single" or "series"'):
        load_league(path)
    path.write_text('[league]\nformat = "series"\nseries_games = 0\n' + bots)
    with pytest.raises(SettingsError, match="series_games: must be at least 1"):
        load_league(path)
    path.write_text('[league]\nformat = "series"\n' + bots)
    assert load_league(path).series_length == 6


# ------------------------------------------------------------- no stored game replayed


class UnitsSeen:
    """Wraps the runner's play_unit: the games each unit's bots were asked to play, and
    which of them were stored already (replayed to the bots, not stored again)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.played: list[str] = []
        self.replayed: list[str] = []
        real = runner.play_unit

        async def spy(games: Sequence[ScheduledGame], *args: Any, **kwargs: Any) -> Any:
            replayed = kwargs.get("replayed", ())
            self.played += [g.game_id for g in games]
            self.replayed += [g.game_id for g in games if g.game_id in replayed]
            return await real(games, *args, **kwargs)

        monkeypatch.setattr(runner, "play_unit", spy)


@pytest.mark.slow
@pytest.mark.parametrize(("first", "then"), [
    # 3 bots, 2 deals, units of 2 deals; then 4 deals: units of 4 deals would hold the 2
    # stored ones.
    ((3, 2), (3, 4)),
    # 2 bots, 6 deals in units of 2; then a third bot and 9 deals (units of 6 or 9).
    ((2, 6), (3, 9)),
])
async def test_growing_never_makes_the_bots_play_a_stored_game_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: tuple[int, int],
    then: tuple[int, int],
) -> None:
    db = tmp_path / "r.sqlite"
    every = {"greedy": GREEDY, "random1": f"{RANDOM} 1", "random2": f"{RANDOM} 2"}
    bots = dict(list(every.items())[:first[0]])
    await grow(tmp_path, db, bots, deals=first[1])
    seen = UnitsSeen(monkeypatch)
    grown = dict(list(every.items())[:then[0]])
    played = await grow(tmp_path, db, grown, deals=then[1])
    assert played == total_games(then[0], 2, then[1]) - total_games(first[0], 2, first[1])
    assert seen.replayed == []
    assert len(seen.played) == played
    assert stored(db) == full_schedule(list(grown), then[1])


@pytest.mark.slow
async def test_a_grown_league_resumed_after_a_kill_replays_only_its_own_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A unit cut short by a kill is played again from its start, its stored games
    replayed to the bots (so their processes live through the same games): the units of
    a grown league stay the ones it planned, whatever the league file says of deals."""
    db = tmp_path / "r.sqlite"
    bots = {"greedy": GREEDY, "random1": f"{RANDOM} 1"}
    await grow(tmp_path, db, bots, deals=2)   # one run of deals 0-1
    await grow(tmp_path, db, bots, deals=6)   # deals 2-5 in a run of their own
    with ResultStore(db) as store:
        plan = store.meta(runner.UNIT_PLAN)
    assert plan is not None and [run[:2] for run in json.loads(plan)] == [[0, 2], [2, 6]]
    # As if killed after the first game of the unit of deals 2-3 in rotation 0.
    config = load_league(league(tmp_path, bots, deals=6))
    units = list(runner.pending_units(config, set(), plan=runner.unit_plan(config, plan)))
    cut = next(u for u in units if u.games[0].deal == 2 and u.games[0].rotation == 0)
    assert [g.deal for g in cut.games] == [2, 3]
    kept = cut.games[0].game_id
    forget = [g.game_id for g in cut.games[1:]]
    with contextlib.closing(sqlite3.connect(db)) as raw, raw:
        for table in ("seat_times", "seats", "games"):
            raw.executemany(f"DELETE FROM {table} WHERE game_id = ?", [(g,) for g in forget])
    seen = UnitsSeen(monkeypatch)
    assert await grow(tmp_path, db, bots, deals=6) == len(forget)
    assert seen.replayed == [kept]
    assert stored(db) == full_schedule(list(bots), 6)


def test_a_plan_of_units_grows_by_runs_of_its_own() -> None:
    config = LeagueConfig(path=Path("league.toml"), deals=2, seed=1, bots=tuple(
        BotSpec(name, BotCommand(["bot"])) for name in ("a", "b", "c")))
    first = runner.unit_plan(config, None)
    assert first == (DealRun(0, 2, 2),)
    grown = runner.unit_plan(attrs.evolve(config, deals=5), runner.plan_text(first))
    assert grown[0] == first[0] and grown[1].first == 2 and grown[1].stop == 5
    # Fewer deals than planned: the plan stays, and the units are cut at the deals.
    assert runner.unit_plan(attrs.evolve(config, deals=3), runner.plan_text(grown)) == grown
    with pytest.raises(StoreError, match="plan of units is damaged"):
        runner.unit_plan(config, "[[0, 2, 2], [3, 5, 1]]")
    with pytest.raises(StoreError, match="plan of units is damaged"):
        runner.unit_plan(config, '{"a": 1}')
