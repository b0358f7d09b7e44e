"""What the finals play, fixed when they begin: the finalists (each participant's latest
bot then), the deals and the table size. Kept in the competition's database, so finals
interrupted by a kill go on with the same bots at the next start."""

from __future__ import annotations

import json
from typing import Final

import attrs

__all__ = ["MAX_DEALS", "FinalsPlan"]

#: The most deals a table of the finals may play.
MAX_DEALS: Final = 1000


@attrs.frozen
class FinalsPlan:
    #: The bots of the finals, as they play (``name@N``), sorted by participant.
    entrants: tuple[str, ...]
    deals: int
    table_size: int

    def check(self) -> None:
        """ValueError, with one line that says why, for finals that cannot be played."""
        if not 2 <= self.table_size <= 10:
            raise ValueError(f"the table size must be between 2 and 10, got {self.table_size}")
        if not 1 <= self.deals <= MAX_DEALS:
            raise ValueError(f"the deals must be between 1 and {MAX_DEALS}, got {self.deals}")
        if len(self.entrants) < self.table_size:
            raise ValueError(f"the finals need at least {self.table_size} participants with"
                             f" a bot in the ladder, found {len(self.entrants)}")

    def to_text(self) -> str:
        return json.dumps({"entrants": list(self.entrants), "deals": self.deals,
                           "table_size": self.table_size})

    @classmethod
    def from_text(cls, text: str) -> FinalsPlan:
        raw = json.loads(text)
        return cls(tuple(str(e) for e in raw["entrants"]), int(raw["deals"]),
                   int(raw["table_size"]))
