"""The reference schedule of a round-robin league, written apart from the league's own
(``referee.core.league_units``) for the tests to compare it with: every block (one deal
at one table, in every seat rotation), table by table, deal by deal."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from referee.core.schedule import ScheduledGame, block_games, derive_seed


def round_robin(bots: Sequence[str], table_size: int, deals: int, master_seed: int
                ) -> Iterator[list[ScheduledGame]]:
    """Every block of a round-robin league, table by table, deal by deal."""
    for table in itertools.combinations(bots, table_size):
        for deal in range(deals):
            yield block_games(table, deal, derive_seed(master_seed, "deal", deal))
