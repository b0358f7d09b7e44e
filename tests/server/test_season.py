"""No deal anyone can compute before it is played: the real ``taki-referee serve`` on
127.0.0.1 shows the season's commitment and never its seed while it runs; each table's
deals are its own; the seed is revealed when the organizer ends the season, and
``taki-referee verify-season`` checks every deal the ladder played against it."""

from __future__ import annotations

import hashlib
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from served import bot_folder
from test_serve import Server, add_participant, games_stored, get_json, taki
from test_serve import organizer as organizer  # the fixture

from referee.competition import kept_season
from referee.competition.season import FORMAT, SeasonSecret, deal_of, deal_seed, new_season
from referee.core import derive_seed
from referee.league.store import ResultStore


def test_the_commitment_is_the_sha256_of_the_documented_text() -> None:
    season = SeasonSecret(12345, "0" * 32)
    text = f"taki-referee-season-v1:{'0' * 32}:12345"
    assert FORMAT.format(salt="0" * 32, seed=12345) == text
    assert season.commitment == hashlib.sha256(text.encode()).hexdigest()
    assert max(new_season().seed.bit_length() for _ in range(4)) > 64
    assert new_season().salt != new_season().salt


def test_each_table_has_deals_of_its_own() -> None:
    seed = new_season().seed
    ab, ac = deal_seed(seed, ("a@1", "b@1"), 0), deal_seed(seed, ("a@1", "c@1"), 0)
    assert ab != ac != deal_seed(seed, ("a@1", "b@1"), 1)
    assert derive_seed(seed, "deal", 0) not in (ab, ac)  # not the league's shared deals
    assert deal_of("a@1,b@1/deal17/rot1") == (("a@1", "b@1"), 17)
    assert deal_of("game1") is None


def _files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.mark.slow
def test_no_page_api_replay_or_log_shows_the_seed_until_the_season_ends(
        organizer: Path) -> None:
    tokens = {name: add_participant(organizer, name) for name in ("alice", "bob")}
    server = Server(organizer)
    try:
        for who in tokens:
            done = taki("submit", server.url, str(bot_folder(organizer / who, f"{who}-bot")),
                        "--token", tokens[who], cwd=organizer, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
        db = organizer / "competition.sqlite"
        deadline = time.monotonic() + 240
        while games_stored(db) < 4:
            assert time.monotonic() < deadline
            assert server.process.poll() is None, "".join(server.lines)
            time.sleep(1)
        season = kept_season(db)
        assert season is not None
        secret = str(season.seed).encode()
        public = get_json(f"{server.url}/api/competition")["season"]
        assert public == {"format": FORMAT, "commitment": season.commitment,
                          "ended_at": None, "seed": None, "salt": None}
        organizer_token = (organizer / "organizer.token").read_text().strip()
        get_json(f"{server.url}/api/ladder/pause", organizer_token, post=True)
        with ResultStore(db, readonly=True) as results:
            records = list(results.games())
        for record in records:  # each deal is its table's own, from the season's seed
            found = deal_of(record.game_id)
            assert found is not None
            assert record.seed == deal_seed(season.seed, *found)
        for number in range(1, len(records) + 1):
            for path in (f"/games/{number}", f"/games/{number}/viewer"):
                with urllib.request.urlopen(f"{server.url}{path}", timeout=30) as answer:
                    page = answer.read()
                assert secret not in page, path
                assert re.search(rb'"master_seed": *"?\d', page) is None, path
        with urllib.request.urlopen(f"{server.url}/", timeout=30) as answer:
            board = answer.read()
        assert season.commitment.encode() in board and secret not in board
        assert _files_holding(organizer / "competition-files", secret) == []
        assert all(secret not in line.encode() for line in server.lines)
        # The organizer ends the season: the ladder stays paused and the seed is out.
        ended = get_json(f"{server.url}/api/season/end", organizer_token, post=True)
        assert ended["season"]["seed"] == str(season.seed)
        assert ended["season"]["salt"] == season.salt
        with urllib.request.urlopen(f"{server.url}/", timeout=30) as answer:
            assert secret in answer.read()  # the board shows the seed once it is out
        with pytest.raises(urllib.error.HTTPError) as refused:
            get_json(f"{server.url}/api/ladder/resume", organizer_token, post=True)
        assert refused.value.code == 409
        checked = taki("verify-season", "--db", "competition.sqlite", "--seed",
                       str(season.seed), "--salt", season.salt, "--commitment",
                       public["commitment"], cwd=organizer)
        verified = re.search(r"(\d+) games, 0 problems", checked.stdout)
        assert verified is not None and int(verified[1]) >= len(records), checked.stdout
        wrong = taki("verify-season", "--db", "competition.sqlite", "--seed",
                     str(season.seed + 1), "--salt", season.salt, "--commitment",
                     public["commitment"], cwd=organizer, check=False)
        assert wrong.returncode == 1
        assert "FAIL commitment" in wrong.stdout and "the season gives" in wrong.stdout
    finally:
        server.stop()

