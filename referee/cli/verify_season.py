"""``taki-referee verify-season``: check, once a season has ended, that every deal its
ladder played came from the seed committed to when it began.

From the published seed, salt and commitment (``GET /api/competition`` once the season
has ended), it recomputes the commitment, then each game's deck seed from its id (the
table and the deal), and re-plays each replay from that seed (the deal and every move,
as ``taki-referee replay verify``). The games come from the competition's database
(``--db``: the seed and salt default to the ones it keeps) or from replay files.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from referee.competition import SeasonSecret, kept_season, wrong_deal
from referee.core import Replay, ReplayError, UsageError, verify
from referee.league import ResultStore, StoreError


def _season(args: argparse.Namespace) -> SeasonSecret:
    if args.seed is not None and args.salt is not None:
        try:
            return SeasonSecret(int(args.seed), args.salt)
        except ValueError as exc:
            raise UsageError(f"--seed and --salt: {exc}") from None
    if args.db is None:
        raise UsageError("give --seed and --salt (as published when the season ended),"
                         " or --db")
    season = kept_season(args.db)
    if season is None:
        raise UsageError(f"{args.db} keeps no season: give --seed and --salt")
    return season


def _games(args: argparse.Namespace) -> Iterator[tuple[str, int, Path | None]]:
    """Each game's id, deck seed and replay file (None when it has none)."""
    if args.db is not None:
        try:
            with ResultStore(args.db, readonly=True) as store:
                records = [*store.games(), *store.voided_games()]
        except StoreError as exc:
            raise UsageError(str(exc)) from None
        for record in records:
            yield record.game_id, record.seed, None if record.replay is None else Path(
                record.replay)
    for path in args.replays:
        try:
            replay = Replay.load(path)
        except ReplayError as exc:
            yield str(path), -1, None
            print(f"FAIL {path}: {exc}")
            continue
        yield replay.game_id, replay.seed, path


def _shared(args: argparse.Namespace) -> bool:
    """Whether the database's ladder dealt alike at every table (its earlier scheme)."""
    if args.db is None:
        return False
    with ResultStore(args.db, readonly=True) as store:
        return store.meta("deals") == "shared"


def verify_season_command(args: argparse.Namespace) -> int:
    season = _season(args)
    failures = 0
    if args.commitment is not None and args.commitment.lower() != season.commitment:
        print(f"FAIL commitment: the seed and salt give {season.commitment},"
              f" not {args.commitment}")
        failures += 1
    shared = _shared(args)
    games = 0
    for game_id, seed, replay_path in _games(args):
        games += 1
        problem = None if seed < 0 else wrong_deal(season, game_id, seed, shared=shared)
        if problem is None and replay_path is not None and replay_path.exists():
            try:
                replay = Replay.load(replay_path)
                if replay.seed != seed:
                    problem = f"{game_id}: its replay was dealt from seed {replay.seed}"
                else:
                    verify(replay)
            except ReplayError as exc:
                problem = f"{game_id}: its replay: {exc}"
        if problem is not None or seed < 0:
            failures += 1
            if problem is not None:
                print(f"FAIL {problem}")
    print(f"season {season.commitment}: {games} games, {failures} problems")
    return 1 if failures else 0
