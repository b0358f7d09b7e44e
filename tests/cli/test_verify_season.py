"""``taki-referee verify-season`` in the test process: the commitment against the seed
and salt, a replay it cannot read, and the arguments it needs (tests/server/test_season.py
checks a real season's deals, through a server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.cli.main import main
from referee.competition.season import SeasonSecret

SEASON = SeasonSecret(12345, "0123456789abcdef" * 2)


def test_the_commitment_of_the_seed_and_salt_passes(capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    code = main(["verify-season", "--seed", str(SEASON.seed), "--salt", SEASON.salt,
                 "--commitment", SEASON.commitment.upper()])
    assert code == 0
    assert capsys.readouterr().out == f"season {SEASON.commitment}: 0 games, 0 problems\n"


def test_another_commitment_fails(capsys: pytest.CaptureFixture[str]) -> None:
    other = SeasonSecret(SEASON.seed + 1, SEASON.salt)
    code = main(["verify-season", "--seed", str(other.seed), "--salt", other.salt,
                 "--commitment", SEASON.commitment])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith(f"FAIL commitment: the seed and salt give {other.commitment},"
                          f" not {SEASON.commitment}\n")
    assert out.endswith(": 0 games, 1 problems\n")


def test_a_replay_it_cannot_read_is_a_problem(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "game.json"
    broken.write_text("{not json")
    code = main(["verify-season", "--seed", str(SEASON.seed), "--salt", SEASON.salt,
                 str(broken)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith(f"FAIL {broken}: ") and out.endswith(": 1 games, 1 problems\n")


@pytest.mark.parametrize(("args", "error"), [
    ([], "give --seed and --salt (as published when the season ended), or --db"),
    (["--seed", "-1", "--salt", SEASON.salt], "--seed and --salt: a season needs a seed"),
])
def test_without_a_season_it_says_what_to_give(
    args: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify-season", *args]) == 2
    err = capsys.readouterr().err
    assert error in err and "Traceback" not in err and err.count("\n") == 1
