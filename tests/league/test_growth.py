"""Leagues that grow: bots added, deals raised, bots retired, new versions entered. Each
run plays only the games missing from the full schedule of the league file as it is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from jsonout import strict_json

from referee.config.errors import SettingsError
from referee.config.settings import load_league
from referee.core.schedule import round_robin, total_games
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
