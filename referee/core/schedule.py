"""League schedules, as pure logic: which bots meet, on which deal, in which seats.

Every combination of ``table_size`` bots is a table. Each deal (a deck seed derived
from the master seed) is played at every table once per seat rotation, so every bot
plays the same cards from every seat (duplicate format): the games of one deal at one
table form a duplicate *block*. The schedule is a generator: a league of hundreds of
bots is never held in memory.

The games are played in *units of work*: one set of bot processes plays one unit. A
unit is one seat rotation of one table over a run of consecutive deals, so no process
plays two games of a deal (it would know the other hands from the first), and its
bounds depend on the schedule alone, so a league resumed after a kill starts its
processes exactly where an uninterrupted run does.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import secrets
from collections.abc import Iterator, Sequence

import attrs

#: Master seeds are below this: 63 bits, like the seeds derived from them.
SEED_BITS = 63


def fresh_seed() -> int:
    """A master seed from the operating system's randomness. The default of every run:
    deals derive from the master seed and the public game ids, so a master seed that
    anyone could guess (a fixed default) would let a bot rebuild every hand and the
    draw order with the public rules engine. Runs print and store the seed they used, so
    that ``--seed`` (or ``seed`` in a league file) repeats them."""
    return secrets.randbits(SEED_BITS)


def derive_seed(master: int, *parts: object) -> int:
    """A 63-bit seed from the master seed and a path of names; stable across runs and
    platforms (unlike ``hash()``)."""
    text = ":".join(str(p) for p in (master, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


@attrs.frozen
class ScheduledGame:
    """One game of a league: a stable id, its duplicate block and its seating."""

    game_id: str
    block: str
    deal: int
    rotation: int
    seed: int
    #: Bot names by seat.
    seats: tuple[str, ...]
    #: The seat that plays first (R3): 0, but for the games of a series, whose seats
    #: stay put while the first move passes round (R24).
    first_seat: int = 0


def rotate(table: Sequence[str], rotation: int) -> tuple[str, ...]:
    """Seat ``i`` gets ``table[(i + rotation) % len(table)]``."""
    n = len(table)
    return tuple(table[(i + rotation) % n] for i in range(n))


def block_games(table: Sequence[str], deal: int, seed: int) -> list[ScheduledGame]:
    """The games of one duplicate block: one deal, every rotation of the table."""
    block = f"{','.join(table)}/deal{deal}"
    return [
        ScheduledGame(
            game_id=f"{block}/rot{r}",
            block=block,
            deal=deal,
            rotation=r,
            seed=seed,
            seats=rotate(table, r),
        )
        for r in range(len(table))
    ]


def match_games(
    names: Sequence[str], games: int, seed: int, rotation: int | None = None
) -> Iterator[ScheduledGame]:
    """The schedule of ``taki-referee match``: game ``i`` (``game{i+1}``) deals deck
    ``i // n`` with the bots rotated ``i % n`` seats, so every ``n`` consecutive games
    replay one deal from every seat. The games are made one at a time, as they are
    played. With ``rotation``, only the games of that rotation: a match plays a rotation
    at a time, by bot processes of its own, so that no process plays a deal twice."""
    n = len(names)
    first, step = (0, 1) if rotation is None else (rotation, n)
    for i in range(first, games, step):
        deal, rot = divmod(i, n)
        yield ScheduledGame(
            game_id=f"game{i + 1}",
            block=f"deal{deal}",
            deal=deal,
            rotation=rot,
            seed=derive_seed(seed, "deal", deal),
            seats=rotate(names, rot),
        )


SERIES_PREFIX = "series"


def series_of(game_id: str) -> str | None:
    """The series a game belongs to: its id without the game's number (``series2`` for
    ``series2/game3`` of a match, ``a,b/series4/rot1`` of a league); None for a game of
    no series."""
    parts = game_id.split("/")
    if (len(parts) >= 2 and parts[-1].startswith("game")
            and any(p.startswith(SERIES_PREFIX) for p in parts[:-1])):
        return "/".join(parts[:-1])
    return None


def series_games(
    names: Sequence[str], games: int, series_length: int, seed: int,
    rotation: int | None = None,
) -> Iterator[ScheduledGame]:
    """The schedule of ``taki-referee match --series``: series of ``series_length``
    games (R24), ``games`` in all. The bots keep their seats through a series and the
    first seat passes round from game to game; series ``s`` seats the bots in rotation
    ``s % n`` and plays deals ``(s // n) * length`` onwards, so every ``n`` consecutive
    series play the same deals from every seating (duplicate series). With
    ``rotation``, only the series of that seating: each seating has bot processes of
    its own, so that no process plays a deal twice."""
    n = len(names)
    for i in range(games):
        number, k = divmod(i, series_length)
        seating = number % n
        if rotation is not None and seating != rotation:
            continue
        deal = (number // n) * series_length + k
        yield ScheduledGame(
            game_id=f"{SERIES_PREFIX}{number + 1}/game{k + 1}",
            block=f"deal{deal}",
            deal=deal,
            rotation=seating,
            seed=derive_seed(seed, "deal", deal),
            seats=rotate(names, seating),
            first_seat=k % n,
        )


def _check_table_size(bots: Sequence[str], table_size: int) -> None:
    if not 2 <= table_size <= len(bots):
        raise ValueError(
            f"table_size {table_size} needs between 2 and {len(bots)} (the number of bots)"
        )


@attrs.frozen
class WorkUnit:
    """The games one set of bot processes plays: one rotation of one table, over deals
    ``first_deal`` to ``last_deal``."""

    name: str
    games: tuple[ScheduledGame, ...]


def league_series(
    table: Sequence[str], number: int, rotation: int, length: int, master_seed: int
) -> list[ScheduledGame]:
    """Series ``number`` of a league of series at ``table``, in seat rotation
    ``rotation``: ``length`` games on deals ``number * length`` onwards, the seats kept
    and the first move passing round (R24). Every rotation plays the same deals: the
    series of one number form a duplicate block."""
    names = ",".join(table)
    block = f"{names}/{SERIES_PREFIX}{number}"
    games = []
    for k in range(length):
        deal = number * length + k
        games.append(ScheduledGame(
            game_id=f"{block}/rot{rotation}/game{k + 1}",
            block=block,
            deal=deal,
            rotation=rotation,
            seed=derive_seed(master_seed, "deal", deal),
            seats=rotate(table, rotation),
            first_seat=k % len(table),
        ))
    return games


@attrs.frozen
class DealRun:
    """Deals ``first`` to ``stop - 1`` of every table, cut into units of ``size`` deals
    (the last one shorter when ``size`` does not divide the run)."""

    first: int = attrs.field(validator=attrs.validators.ge(0))
    stop: int
    size: int = attrs.field(validator=attrs.validators.ge(1))

    def __attrs_post_init__(self) -> None:
        if self.stop <= self.first:
            raise ValueError(f"a run of deals must end after it starts: {self.first}-{self.stop}")

    def to_json(self) -> list[int]:
        return [self.first, self.stop, self.size]

    @classmethod
    def from_json(cls, value: object) -> DealRun:
        if (not isinstance(value, list) or len(value) != 3
                or not all(type(v) is int for v in value)):
            raise ValueError(f"not a run of deals: {value!r}")
        return cls(value[0], value[1], value[2])


def unit_bounds(runs: Sequence[DealRun], deals: int) -> Iterator[tuple[int, int]]:
    """The deals of each unit of a table, ``(first, stop)``: the units of ``runs`` cut
    at ``deals``. The runs must follow one another from deal 0 up to at least ``deals``.
    A unit cut short keeps its first games: its processes live through the same games as
    the whole unit's, as far as it goes."""
    end = 0
    for run in runs:
        if run.first != end:
            raise ValueError(f"the runs of deals skip or repeat deals at deal {end}")
        end = run.stop
        for start in range(run.first, min(run.stop, deals), run.size):
            yield start, min(start + run.size, run.stop, deals)
    if end < deals:
        raise ValueError(f"the runs of deals end at deal {end}, before deal {deals}")


def league_units(
    bots: Sequence[str], table_size: int, deals: int, master_seed: int,
    deals_per_unit: int | Sequence[DealRun], series_length: int | None = None,
) -> Iterator[WorkUnit]:
    """Every unit of work of a round-robin league, table by table, then by runs of
    ``deals_per_unit`` deals, then by rotation. ``deals_per_unit`` may instead give the
    runs of deals (:class:`DealRun`) that the league cut its deals into as they were
    added, so that a league grown by more deals keeps the units its stored games were
    played in. The same arguments always give the same units, whatever has been played
    already. With ``series_length``, the league plays series (:func:`league_series`):
    ``deals`` and ``deals_per_unit`` count series."""
    _check_table_size(bots, table_size)
    if isinstance(deals_per_unit, int):
        if deals_per_unit < 1:
            raise ValueError(f"deals_per_unit must be at least 1, got {deals_per_unit}")
        runs: Sequence[DealRun] = [DealRun(0, max(deals, 1), deals_per_unit)]
    else:
        runs = deals_per_unit
    bounds = list(unit_bounds(runs, deals))
    for table in itertools.combinations(bots, table_size):
        for start, stop in bounds:
            yield from table_units(table, start, stop, master_seed, series_length)


def table_units(
    table: Sequence[str], start: int, stop: int, master_seed: int,
    series_length: int | None = None,
) -> Iterator[WorkUnit]:
    """The units of one table over deals (or series) ``start`` to ``stop - 1``, one per
    seat rotation, named ``<table>/deals<start>-<last>/rot<r>``."""
    kind = "deals" if series_length is None else SERIES_PREFIX
    if series_length is None:
        blocks = [block_games(table, deal, derive_seed(master_seed, "deal", deal))
                  for deal in range(start, stop)]
    for rotation in range(len(table)):
        if series_length is None:
            games = tuple(block[rotation] for block in blocks)
        else:
            games = tuple(game for number in range(start, stop) for game in
                          league_series(table, number, rotation, series_length,
                                        master_seed))
        yield WorkUnit(
            name=f"{','.join(table)}/{kind}{start}-{stop - 1}/rot{rotation}",
            games=games,
        )


def total_games(bots: int, table_size: int, deals: int, series_length: int | None = None
                ) -> int:
    """The games of a round-robin league (``deals`` series of ``series_length``)."""
    return math.comb(bots, table_size) * deals * table_size * (series_length or 1)
