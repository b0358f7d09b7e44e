"""The taki-referee command: match output, argument errors, ratings and replay checks."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from jsonout import strict_json
from processes import deal_memory_command, pids_with_a_deal_twice, unmeasured_env

from referee.cli.main import main
from referee.league import store as store_module
from referee.league.store import GameRecord, ResultStore, SeatRecord

REPO = Path(__file__).resolve().parents[2]
GREEDY = f"python {REPO / 'sample_bots' / 'greedy_bot.py'}"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'}"
CRASHER = "python -c 'import sys; sys.exit(3)'"
REFEREE = Path(sys.executable).with_name("taki-referee")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed command in a child process, as a user or a CI job runs it."""
    return subprocess.run([str(REFEREE), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def match_json(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> Any:
    code = main(["match", *args, "--json", "--log-dir", str(tmp_path / "logs")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


# --------------------------------------------------------------------- match


@pytest.mark.slow
def test_match_json_shape(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = match_json(capsys, tmp_path, f"greedy={GREEDY}", f"random={RANDOM} 1",
                     "--games", "4", "--seed", "7")
    assert set(out) == {"seed", "interrupted", "games", "voided", "void_plays"}
    assert out["seed"] == 7 and out["interrupted"] is False
    assert out["voided"] == 0 and out["void_plays"] == 0
    games = out["games"]
    assert len(games) == 4
    for game in games:
        assert set(game) >= {"seed", "players", "actions", "replay"}
        assert isinstance(game["seed"], int) and not isinstance(game["seed"], bool)
        assert isinstance(game["actions"], int) and game["actions"] > 0
        assert game["replay"] is None
        assert [p["seat"] for p in game["players"]] == [0, 1]
        for player in game["players"]:
            assert set(player) >= {"bot", "seat", "place", "points", "forfeit"}
            assert player["bot"] in ("greedy", "random")
            assert player["place"] in (1, 2) and isinstance(player["points"], int)
            assert player["forfeit"] is None
        assert sorted(p["place"] for p in game["players"]) == [1, 2]
    # Seats rotate from game to game, and each deal is played from both seats.
    assert [[p["bot"] for p in g["players"]] for g in games] == [
        ["greedy", "random"], ["random", "greedy"], ["greedy", "random"], ["random", "greedy"],
    ]
    assert games[0]["seed"] == games[1]["seed"] != games[2]["seed"] == games[3]["seed"]
    # The same seed deals the same cards again.
    again = match_json(capsys, tmp_path, f"greedy={GREEDY}", f"random={RANDOM} 1",
                       "--games", "2", "--seed", "7")
    assert [g["seed"] for g in again["games"]] == [g["seed"] for g in games[:2]]


@pytest.mark.slow
def test_match_without_seed_deals_from_a_fresh_seed_it_reports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bots = (f"greedy={GREEDY}", f"random={RANDOM} 1", "--games", "2")
    first = match_json(capsys, tmp_path, *bots, "--replay-dir", str(tmp_path / "r1"))
    second = match_json(capsys, tmp_path, *bots)
    # Not a fixed default: a bot cannot rebuild the deals from the public game ids.
    assert first["seed"] != second["seed"]
    assert first["games"][0]["seed"] != second["games"][0]["seed"]
    # --seed with the reported seed deals the same cards again; the replays say it too.
    again = match_json(capsys, tmp_path, *bots, "--seed", str(first["seed"]))
    assert [g["seed"] for g in again["games"]] == [g["seed"] for g in first["games"]]
    replay = json.loads((tmp_path / "r1" / "game1.json").read_text())
    assert replay["master_seed"] == first["seed"]
    main(["match", *bots, "--log-dir", str(tmp_path / "logs")])
    assert "master seed " in capsys.readouterr().err


@pytest.mark.slow
def test_match_never_gives_a_bot_process_two_games_of_one_deal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "pids.log"
    bots = [f"{name}={deal_memory_command(log)}" for name in ("a", "b", "c")]
    out = match_json(capsys, tmp_path, *bots, "--games", "9", "--seed", "3")
    # Game N plays deal (N - 1) // 3: every deal from every seat, in the order given.
    assert [g["game_id"] for g in out["games"]] == [f"game{i}" for i in range(1, 10)]

    def deal_of(game_id: str) -> str:
        return str((int(game_id.removeprefix("game")) - 1) // 3)

    assert pids_with_a_deal_twice(log, deal_of) == {}
    pids = {line.split()[0] for line in log.read_text().splitlines()}
    assert len(pids) == 9  # three bots, a process each per rotation, three games each


@pytest.mark.slow
def test_match_seats_rotate_with_three_bots(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = match_json(capsys, tmp_path, f"{RANDOM} 1", f"{RANDOM} 2", GREEDY)
    games = out["games"]
    assert len(games) == 3  # default: one game per seat rotation
    seatings = [[p["bot"] for p in g["players"]] for g in games]
    # Repeated names get a suffix; every bot sits in every seat once.
    assert seatings[0] == ["random_bot", "random_bot-2", "greedy_bot"]
    assert seatings[1] == ["random_bot-2", "greedy_bot", "random_bot"]
    assert seatings[2] == ["greedy_bot", "random_bot", "random_bot-2"]
    assert len({g["seed"] for g in games}) == 1


def test_match_checks_its_bots_first(tmp_path: Path) -> None:
    result = run("match", f"greedy={GREEDY}", f"crasher={CRASHER}", "--json",
                 "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    err = result.stderr
    assert ("taki-referee: argument 2: bot 'crasher' failed the bot check: exited with"
            " status 3 before its handshake") in err
    assert "command: " in err and "sys.exit(3)" in err
    assert err.count("taki-referee:") == 1  # greedy passed
    assert "Traceback" not in err
    assert not (tmp_path / "logs").exists()  # no game was played


def test_match_reports_forfeits(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # --no-bot-check: a bot that cannot start plays, and forfeits every game.
    out = match_json(capsys, tmp_path, f"greedy={GREEDY}", f"crasher={CRASHER}",
                     "--games", "2", "--no-bot-check")
    for game in out["games"]:
        crasher = next(p for p in game["players"] if p["bot"] == "crasher")
        assert crasher["forfeit"]["reason"] == "crash"
        assert isinstance(crasher["forfeit"]["detail"], str) and crasher["forfeit"]["detail"]
        assert crasher["place"] == 2
        greedy = next(p for p in game["players"] if p["bot"] == "greedy")
        assert greedy["forfeit"] is None and greedy["place"] == 1


def test_match_table_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["match", f"greedy={GREEDY}", f"random={RANDOM} 1", "--games", "2",
                 "--log-dir", str(tmp_path / "logs")])
    assert code == 0
    out = capsys.readouterr().out
    assert "Match results" in out and "greedy" in out and "random" in out


def test_missing_bot_binary(tmp_path: Path) -> None:
    result = run("match", "no-such-bot-binary --level 3", RANDOM, "--json",
                 "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 2
    assert "no-such-bot-binary --level 3" in result.stderr
    assert "not found" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.slow
def test_missing_bot_binary_in_any_seat(tmp_path: Path) -> None:
    result = run("match", RANDOM, "./bots/absent_bot", "--log-dir", str(tmp_path / "logs"),
                 cwd=tmp_path)
    assert result.returncode == 2
    assert "./bots/absent_bot" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args, message", [
    ([RANDOM], "a match needs 2 to 10 bots, got 1"),
    ([RANDOM] * 11, "a match needs 2 to 10 bots, got 11"),
    ([RANDOM, RANDOM, "--games", "0"], "--games must be at least 1"),
    ([RANDOM, RANDOM, "--move-ms", "-5"], "move_ms must be positive"),
    ([RANDOM, RANDOM, "--bank-ms", "0"], "bank_ms must be positive"),
    ([RANDOM, RANDOM, "--increment-ms", "100"], "increment_ms requires a bank"),
    ([RANDOM, RANDOM, "--strikes", "0"], "--strikes must be at least 1, not 0"),
    ([RANDOM, RANDOM, "--void-replays", "-1"], "--void-replays must be at least 0, not -1"),
    ([RANDOM, RANDOM, "--rules", "taki-1980"],
     "bad rules: unknown rules preset 'taki-1980' (known: super-taki-2018, super-taki-classic)"),
    ([RANDOM, RANDOM, "--flag", "pyramid"], "--flag needs NAME=VALUE"),
    ([RANDOM, RANDOM, "--flag", 'scoring={"colorless": 1}'],
     "--flag scoring: must be a table of both colored_action and colorless"),
    ([RANDOM, RANDOM, "--flag", "wild=true"], "--flag wild: unknown rule flag"),
    ([RANDOM, RANDOM, "--flag", "pyramid=yes"], "is not a JSON value"),
    ([RANDOM, RANDOM, "--flag", "pyramid=\"yes\""], "--flag pyramid: must be true or false"),
    ([RANDOM, RANDOM, "--flag", "hand_size=0"], "hand_size"),
    (["python 'unclosed", RANDOM], "bot 1: cannot parse bot command"),
    (["", RANDOM], "bot 1: empty bot command"),
    ([RANDOM, "python bot.py\0"], "bot 2: the command contains a NUL character (\\u0000)"),
    ([RANDOM, RANDOM, "--move-ms", "1000000000000"],
     "move_ms must be at most 2147483647 (about 24.8 days"),
    ([RANDOM, RANDOM, "--reaction-ms", "3000000000"], "reaction_ms must be at most 2147483647"),
    ([RANDOM, RANDOM, "--flag", "hand_size=52"],
     "--flag hand_size=52: hand_size 52 is too large for 2 players: the deck deals at most 51"),
    ([RANDOM] * 10 + ["--flag", "hand_size=11"],
     "--flag hand_size=11: hand_size 11 is too large for 10 players"),
])
def test_bad_match_arguments(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    code = main(["match", *args, "--log-dir", str(tmp_path / "logs")])
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err
    assert captured.out == ""


@pytest.mark.parametrize("args", [
    ["match", RANDOM, RANDOM, "--games", "many"],
    ["match", RANDOM, RANDOM, "--move-ms", "1.5"],
    ["match"],
    ["sprt", RANDOM],
    ["frobnicate"],
])
def test_argparse_errors(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "usage:" in err


@pytest.mark.slow
def test_bad_arguments_in_a_child_process(tmp_path: Path) -> None:
    for args in (["match", RANDOM, RANDOM, "--games", "0"],
                 ["match", RANDOM, RANDOM, "--games", "many"],
                 ["league", str(tmp_path / "absent.toml")]):
        result = run(*args, cwd=tmp_path)
        assert result.returncode == 2, args
        assert result.stderr.strip(), args
        assert "Traceback" not in result.stderr, args


def test_a_file_where_a_directory_is_wanted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Refused before any bot starts or any database is made."""
    afile = tmp_path / "afile"
    afile.write_text("")
    league = tmp_path / "league.toml"
    league.write_text(f'[[bots]]\nname = "a"\ncommand = "{RANDOM}"\n'
                      f'[[bots]]\nname = "b"\ncommand = "{RANDOM}"\n')
    db = tmp_path / "r.sqlite"
    for args, message in (
        (["match", RANDOM, RANDOM, "--log-dir", str(afile)], f"--log-dir {afile}: it is a file"),
        (["match", RANDOM, RANDOM, "--replay-dir", str(afile / "sub")],
         f"--replay-dir {afile / 'sub'}: {afile} is a file, not a directory"),
        (["league", str(league), "--db", str(db), "--log-dir", str(afile)],
         f"--log-dir {afile}: it is a file, not a directory"),
        (["sprt", RANDOM, RANDOM, "--log-dir", str(afile)], f"--log-dir {afile}: it is a file"),
    ):
        assert main(args) == 2, args
        captured = capsys.readouterr()
        assert message in captured.err and captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "league.toml"]


def test_sprt_refuses_a_bad_void_replays_in_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["sprt", RANDOM, RANDOM, "--void-replays", "-2", "--no-bot-check",
                 "--log-dir", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "--void-replays must be at least 0, not -2" in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_the_match_schedule_is_made_as_it_is_played() -> None:
    """``--games 1000000000`` starts at once: no list of every game is built first."""
    from referee.core.schedule import match_games

    schedule = match_games(["a", "b"], 10**12, 5)
    first, second, third = next(schedule), next(schedule), next(schedule)
    assert [g.game_id for g in (first, second, third)] == ["game1", "game2", "game3"]
    assert first.seed == second.seed != third.seed
    assert (first.seats, second.seats) == (("a", "b"), ("b", "a"))


@pytest.mark.slow
def test_bad_input_never_gives_a_traceback(tmp_path: Path) -> None:
    """In a child process, as a user sees it: one line, exit status 2."""
    (tmp_path / "afile").write_text("")
    bots = f'[[bots]]\nname = "a"\ncommand = "{RANDOM}"\n[[bots]]\nname = "b"\n'
    leagues = {
        "env.toml": bots + f'command = "{RANDOM}"\nenv = {{ "A=B" = "x" }}\n',
        "replays.toml": '[league]\nreplay_dir = "afile"\n' + bots + f'command = "{RANDOM}"\n',
        "time.toml": "[time]\nreaction_ms = 3000000000\n" + bots + f'command = "{RANDOM}"\n',
        "good.toml": bots + f'command = "{RANDOM}"\n',
    }
    for name, text in leagues.items():
        (tmp_path / name).write_text(text)
    sqlite_other = tmp_path / "other.db"
    with closing(sqlite3.connect(sqlite_other)) as con:
        con.execute("CREATE TABLE games (id INTEGER)")
    for args, message in (
        (["match", RANDOM, RANDOM, "--flag", "hand_size=57", "--seed", "33"],
         "hand_size 57 is too large for 2 players"),
        (["match", RANDOM, RANDOM, "--move-ms", "1000000000000"], "move_ms must be at most"),
        (["match", RANDOM, RANDOM, "--replay-dir", "afile"], "--replay-dir afile: it is a file"),
        (["league", "env.toml"], "env.toml:7: [[bots]] #2 env: variable name 'A=B'"),
        (["league", "replays.toml"], "replays.toml:2: [league] replay_dir: 'afile': it is a"),
        (["league", "time.toml"], "time.toml:2: [time] reaction_ms: must be at most"),
        (["league", "good.toml", "--log-dir", "afile"], "--log-dir afile: it is a file"),
        (["ratings", "other.db"], "other.db is not a taki-referee results database"),
        (["report", "other.db"], "other.db is not a taki-referee results database"),
    ):
        result = run(*args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)
        assert result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "afile", "env.toml", "good.toml", "other.db", "replays.toml", "time.toml",
    ]


def test_league_and_reports_refuse_another_programs_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as con:
        con.execute("CREATE TABLE meta (k, v)")
        con.execute("INSERT INTO meta VALUES ('mine', 'keep')")
        con.commit()
    before = other.read_bytes()
    league = tmp_path / "league.toml"
    league.write_text(f'[[bots]]\nname = "a"\ncommand = "{RANDOM}"\n'
                      f'[[bots]]\nname = "b"\ncommand = "{RANDOM}"\n')
    for args in (["league", str(league), "--db", str(other), "--no-bot-check"],
                 ["ratings", str(other)], ["report", str(other), "-o", str(tmp_path / "r.html")]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert f"{other} is not a taki-referee results database (its tables: meta)" in err
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["league.toml", "other.db"]


def test_a_league_whose_database_another_program_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_MS", 50)
    league = tmp_path / "league.toml"
    league.write_text(f'[[bots]]\nname = "a"\ncommand = "{RANDOM}"\n'
                      f'[[bots]]\nname = "b"\ncommand = "{RANDOM}"\n')
    db = tmp_path / "r.sqlite"
    ResultStore(db).close()
    with closing(sqlite3.connect(db, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")
        assert main(["league", str(league), "--db", str(db), "--no-bot-check",
                     "--log-dir", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err
    assert "another program is using it" in err and "retry when that program has finished" in err
    with ResultStore(db, readonly=True) as store:
        assert store.game_count() == 0


# ------------------------------------------------------------------- ratings


def league_db(path: Path) -> Path:
    """A results database with a strong, a middling and a weak bot."""
    with ResultStore(path) as store:
        store.register_bots([("strong", "./s"), ("middle", "./m"), ("weak", "./w")])
        n = 0
        for deal in range(12):
            for a, b, a_wins in (("strong", "middle", deal % 4 != 0),
                                 ("strong", "weak", deal % 6 != 0),
                                 ("middle", "weak", deal % 3 != 0)):
                block = f"{a},{b}/deal{deal}"
                for rot in range(2):
                    winner, loser = (a, b) if a_wins else (b, a)
                    seats = (a, b) if rot == 0 else (b, a)
                    forfeit = "timeout" if loser == "weak" and deal == 5 else None
                    n += 1
                    store.record(GameRecord(
                        game_id=f"{block}/rot{rot}", block=block, seed=deal, actions=20,
                        reason="win", seats=tuple(
                            SeatRecord(i, bot, 1 if bot == winner else 2,
                                       0 if bot == winner else 15,
                                       forfeit if bot == loser else None,
                                       "late" if forfeit and bot == loser else None)
                            for i, bot in enumerate(seats)
                        ),
                    ))
    return path


def test_ratings_leaderboard(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = league_db(tmp_path / "r.sqlite")
    assert main(["ratings", str(db)]) == 0
    out = capsys.readouterr().out
    assert "Leaderboard (72 games)" in out
    rows = [line for line in out.splitlines() if any(b in line for b in ("strong", "weak"))]
    assert "strong" in rows[0]
    assert "Crosstable" in out
    assert "timeout 4" in out  # the weak bot's forfeits


def test_ratings_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = league_db(tmp_path / "r.sqlite")
    assert main(["ratings", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 72
    assert [r["bot"] for r in out["ratings"]] == ["strong", "middle", "weak"]
    for row in out["ratings"]:
        assert set(row) >= {"bot", "elo", "ci95", "games", "score"}
        assert row["games"] == 48
        assert row["ci95"][0] <= row["elo"] <= row["ci95"][1]
    assert abs(sum(r["elo"] for r in out["ratings"]) / 3 - 1500) < 0.5
    assert out["forfeits"] == {"weak": {"timeout": 4}}
    assert out["los"]["strong"]["weak"] > 0.95
    assert out["los"]["strong"]["weak"] + out["los"]["weak"]["strong"] == pytest.approx(1)
    # The same database gives the same report.
    assert main(["ratings", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == out


def test_ratings_with_an_anchor(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = league_db(tmp_path / "r.sqlite")
    assert main(["ratings", str(db), "--json", "--anchor", "weak", "--anchor-elo", "1000"]) == 0
    out = json.loads(capsys.readouterr().out)
    weak = next(r for r in out["ratings"] if r["bot"] == "weak")
    assert weak["elo"] == 1000 and weak["ci95"] == [1000, 1000]
    assert main(["ratings", str(db), "--anchor", "nobody"]) == 2
    assert "nobody" in capsys.readouterr().err


def duel_db(path: Path, wins: int, deals: int = 12) -> Path:
    """Two bots; "strong" wins both games of ``wins`` of the ``deals`` deals."""
    with ResultStore(path) as store:
        for deal in range(deals):
            for rot in range(2):
                winner = "strong" if deal < wins else "weak"
                seats = ("strong", "weak") if rot == 0 else ("weak", "strong")
                store.record(GameRecord(
                    game_id=f"strong,weak/deal{deal}/rot{rot}", block=f"strong,weak/deal{deal}",
                    seed=deal, actions=20, reason="win", seats=tuple(
                        SeatRecord(i, bot, 1 if bot == winner else 2, 0, None, None)
                        for i, bot in enumerate(seats)),
                ))
    return path


def test_ratings_prior(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from referee.league.rating_input import rated_games
    from referee.ratings.elo import fit_elo

    def gap(*args: str) -> float:
        assert main(["ratings", str(db), "--json", *args]) == 0
        elo = {r["bot"]: r["elo"] for r in strict_json(capsys.readouterr().out)["ratings"]}
        return float(elo["strong"] - elo["weak"])

    # 18 of 24 games: the maximum likelihood gap is 400 log10(18 / 6).
    db = duel_db(tmp_path / "duel.sqlite", wins=9)
    plain = 400 * math.log10(3)
    assert gap("--prior", "0") == pytest.approx(plain, abs=0.2)
    # The default prior, one virtual draw per bot, pulls the two together.
    assert gap() == gap("--prior", "1") == pytest.approx(185.8, abs=0.2)
    assert gap("--prior", "10") < gap("--prior", "1")
    # Three bots: the same figures as the rating module's plain fit.
    db = league_db(tmp_path / "r.sqlite")
    assert main(["ratings", str(db), "--json", "--prior", "0"]) == 0
    out = strict_json(capsys.readouterr().out)
    with ResultStore(db) as store:
        expected = fit_elo(rated_games(store), prior=0)
    assert {r["bot"]: r["elo"] for r in out["ratings"]} == {
        bot: round(elo, 1) for bot, elo in expected.items()
    }


def test_ratings_prior_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = duel_db(tmp_path / "unbeaten.sqlite", wins=12)
    # Without a prior an unbeaten bot has no finite rating.
    assert main(["ratings", str(db), "--prior", "0"]) == 2
    assert "rate with --prior above 0" in capsys.readouterr().err
    assert main(["ratings", str(db), "--json"]) == 0
    strict_json(capsys.readouterr().out)
    for value in ("-1", "nan", "inf"):
        assert main(["ratings", str(db), "--prior", value]) == 2
        assert "--prior must be a number of games >= 0" in capsys.readouterr().err


def tables_db(path: Path) -> Path:
    """Three-player tables of four bots, "a" best and "d" worst most of the time."""
    bots = ("a", "b", "c", "d")
    with ResultStore(path) as store:
        for deal in range(16):
            table = tuple(b for k, b in enumerate(bots) if k != deal % 4)
            for rot in range(3):
                order = table if (deal + rot) % 3 else table[1:] + table[:1]
                block = f"{','.join(table)}/deal{deal}"
                store.record(GameRecord(
                    game_id=f"{block}/rot{rot}", block=block, seed=deal, actions=20,
                    reason="win", seats=tuple(
                        SeatRecord(i, bot, order.index(bot) + 1, 0, None, None)
                        for i, bot in enumerate(table[rot:] + table[:rot])),
                ))
    return path


def test_ratings_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from referee.league.rating_input import rated_games
    from referee.ratings.elo import fit_elo
    from referee.ratings.leaderboard import MULTIPLAYER_MODEL
    from referee.ratings.plackett_luce import fit_plackett_luce

    def elos(db: Path, *args: str) -> dict[str, float]:
        assert main(["ratings", str(db), "--json", "--prior", "0", *args]) == 0
        return {r["bot"]: r["elo"] for r in strict_json(capsys.readouterr().out)["ratings"]}

    db = tables_db(tmp_path / "tables.sqlite")
    with ResultStore(db) as store:
        games = rated_games(store)
    pairwise = {b: round(e, 1) for b, e in fit_elo(games, prior=0).items()}
    rankings = {b: round(e, 1) for b, e in fit_plackett_luce(games, prior=0).items()}
    assert pairwise != rankings
    assert elos(db, "--model", "bradley-terry") == pairwise
    assert elos(db, "--model", "plackett-luce") == rankings
    # Without --model, the default for tables of three (docs/ratings.md, "Which model").
    assert elos(db) == {"bradley-terry": pairwise, "plackett-luce": rankings}[MULTIPLAYER_MODEL]
    assert main(["ratings", str(db), "--model", "plackett-luce"]) == 0
    assert "Elo from the Plackett-Luce fit" in capsys.readouterr().out
    assert main(["ratings", str(league_db(tmp_path / "r.sqlite"))]) == 0
    assert "Elo from the Bradley-Terry (pairwise) fit" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["ratings", str(db), "--model", "elo"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'elo'" in capsys.readouterr().err


def test_league_rates_with_its_files_rating_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from referee.league.rating_input import rated_games
    from referee.ratings.elo import fit_elo
    from referee.ratings.plackett_luce import fit_plackett_luce

    league = tmp_path / "league.toml"
    league.write_text(f'[league]\ntable_size = 3\ndeals = 1\nseed = 4\n'
                      f'rating_model = "plackett-luce"\n'
                      f'[[bots]]\nname = "g"\ncommand = "{GREEDY}"\n'
                      f'[[bots]]\nname = "r1"\ncommand = "{RANDOM} 1"\n'
                      f'[[bots]]\nname = "r2"\ncommand = "{RANDOM} 2"\n')
    db = tmp_path / "r.sqlite"

    def elos(*args: str) -> dict[str, float]:
        assert main(["league", str(league), "--db", str(db), "--no-bot-check", "--json",
                     "--log-dir", str(tmp_path / "logs"), *args]) == 0
        return {r["bot"]: r["elo"] for r in strict_json(capsys.readouterr().out)["ratings"]}

    first = elos()  # plays the league
    with ResultStore(db) as store:
        games = rated_games(store)
    assert len(games) == 3
    assert fit_elo(games) != pytest.approx(fit_plackett_luce(games), abs=0.1)
    assert first == {b: round(e, 1) for b, e in fit_plackett_luce(games).items()}
    # The command line's --model wins over the file's.
    assert elos("--model", "bradley-terry") == {
        b: round(e, 1) for b, e in fit_elo(games).items()}
    # `ratings` and `report` read only the database, which keeps the league's model.
    assert main(["ratings", str(db), "--json"]) == 0
    stored = {r["bot"]: r["elo"] for r in strict_json(capsys.readouterr().out)["ratings"]}
    assert stored == first
    from referee.present.report import load_report
    report = load_report(db).ratings
    assert report is not None
    assert {b.name: round(b.elo, 1) for b in report.bots} == first


def test_ratings_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["ratings", str(tmp_path / "absent.sqlite")]) == 2
    assert "no results database" in capsys.readouterr().err
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database\n" * 200)
    assert main(["ratings", str(junk)]) == 2
    assert "cannot open results database" in capsys.readouterr().err
    empty = tmp_path / "empty.sqlite"
    ResultStore(empty).close()
    assert main(["ratings", str(empty), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"games": 0, "ratings": [], "forfeits": {},
                                                   "voided": 0, "void_plays": 0}


# -------------------------------------------------------------------- replay


def test_replay_verify(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    out = match_json(capsys, tmp_path, f"greedy={GREEDY}", f"random={RANDOM} 1",
                     "--games", "2", "--replay-dir", str(replays))
    paths = [Path(g["replay"]) for g in out["games"]]
    assert all(p.is_file() and p.parent == replays for p in paths)

    assert main(["replay", "verify", *map(str, paths)]) == 0
    text = capsys.readouterr().out
    assert text.count("ok") == 2 and "FAIL" not in text

    # Tampered: the recorded result swapped.
    data = json.loads(paths[0].read_text())
    data["result"]["places"] = data["result"]["places"][::-1]
    bad_result = tmp_path / "bad_result.json"
    bad_result.write_text(json.dumps(data))
    # Tampered: the first action given to the seat that was not to act.
    data = json.loads(paths[1].read_text())
    data["log"][0]["seat"] = 1 - data["log"][0]["seat"]
    bad_log = tmp_path / "bad_log.json"
    bad_log.write_text(json.dumps(data))
    truncated = tmp_path / "truncated.json"
    truncated.write_text(paths[0].read_text()[:100])

    for bad in (bad_result, bad_log, truncated):
        assert main(["replay", "verify", str(paths[0]), str(bad)]) == 1
        text = capsys.readouterr().out
        assert "FAIL" in text and bad.name in text
        assert "ok" in text  # the good file is still reported as good

    result = run("replay", "verify", str(bad_result), cwd=tmp_path)
    assert result.returncode == 1
    assert "does not reach its recorded result" in result.stdout
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------- a CLI that starts at once


@pytest.mark.parametrize("args", [
    ["--version"], ["--help"], ["match", "--help"], ["league", "--help"], ["sprt", "--help"],
    ["match"], ["sprt", "--move-ms", "x", "a", "b"], ["replay", "render", "--help"],
])
def test_help_version_and_argument_errors_load_no_heavy_module(args: list[str]) -> None:
    """What makes the command slow to start (trio, rich, attrs, the rules core) is
    loaded only once the arguments are good (benchmarks/cli_startup.py times it)."""
    probe = (
        "import sys\n"
        "from referee.cli.main import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('trio', 'rich', 'attr', 'attrs', 'msgpack', 'referee.rules', 'sqlite3')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy\n"
        "             or m.startswith('referee.rules')), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=60, env=unmeasured_env())
    assert result.stderr.strip().splitlines()[-1] == "[]", result.stderr


@pytest.mark.slow
def test_the_scoring_flag_reaches_the_games(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = match_json(capsys, tmp_path, f"{RANDOM} 1", f"{RANDOM} 2", "--games", "2",
                     "--seed", "4", "--replay-dir", str(tmp_path / "r"),
                     "--flag", 'scoring={"colored_action": 0, "colorless": 0}')
    for game in out["games"]:
        replay = json.loads(Path(game["replay"]).read_text())
        assert replay["rules"]["scoring"] == {"colored_action": 0, "colorless": 0}


@pytest.mark.slow
def test_match_series_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--series 3 --games 6: two series of three games, the seats kept within each, the
    first move passing round, and the replays re-play from their first seat."""
    out = match_json(capsys, tmp_path, f"greedy={GREEDY}", f"random={RANDOM} 1",
                     "--series", "3", "--games", "6", "--seed", "2",
                     "--replay-dir", str(tmp_path / "r"))
    games = out["games"]
    assert [g["game_id"] for g in games] == [
        "series1/game1", "series1/game2", "series1/game3",
        "series2/game1", "series2/game2", "series2/game3"]
    assert [[p["bot"] for p in g["players"]] for g in games] == (
        [["greedy", "random"]] * 3 + [["random", "greedy"]] * 3)
    firsts = [json.loads(Path(g["replay"]).read_text())["first_seat"] for g in games]
    assert firsts == [0, 1, 0, 0, 1, 0]
    series = out["series"]
    assert [s["games"] for s in series] == [
        [g["game_id"] for g in games[:3]], [g["game_id"] for g in games[3:]]]
    for one, played in zip(series, (games[:3], games[3:]), strict=True):
        totals = {"greedy": 0, "random": 0}
        for g in played:
            for p in g["players"]:
                totals[p["bot"]] += -100 if p["place"] == 1 else p["points"]
        assert {s["bot"]: s["penalty"] for s in one["standings"]} == totals
        assert sorted(s["place"] for s in one["standings"]) in ([1, 2], [1, 1])
    result = run("replay", "verify", *(g["replay"] for g in games), cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    # The default: one series per seating.
    assert len(match_json(capsys, tmp_path, f"{RANDOM} 1", f"{RANDOM} 2", "--series", "2",
                          "--seed", "1")["series"]) == 2
