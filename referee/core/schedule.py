"""League schedules, as pure logic: which bots meet, on which deal, in which seats.

Every combination of ``table_size`` bots is a table. Each deal (a deck seed derived
from the master seed) is played at every table once per seat rotation, so every bot
plays the same cards from every seat (duplicate format). The schedule is a generator:
a league of hundreds of bots is never held in memory.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterator, Sequence

import attrs


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


def round_robin(
    bots: Sequence[str], table_size: int, deals: int, master_seed: int
) -> Iterator[list[ScheduledGame]]:
    """Every block of a round-robin league, table by table, deal by deal."""
    if not 2 <= table_size <= len(bots):
        raise ValueError(
            f"table_size {table_size} needs between 2 and {len(bots)} (the number of bots)"
        )
    for table in itertools.combinations(bots, table_size):
        for deal in range(deals):
            yield block_games(table, deal, derive_seed(master_seed, "deal", deal))


def total_games(bots: int, table_size: int, deals: int) -> int:
    return math.comb(bots, table_size) * deals * table_size
