"""A season's secret: the seed of the ladder's deals and pairings, committed to in public
when the season starts and revealed when it ends. Pure.

While the season runs nobody outside the server knows the seed, and nothing the server
shows is a key to it: each table's deals have seeds of their own
(:func:`deal_seed`, from the seed, the table's bots and the deal's number), so neither
a game id nor the deal of a finished game (its replay) tells anything about the deals
of any other table or any later deal. What is public from the start is the
*commitment*: the SHA-256 of the seed and a random salt, in the documented text form
:data:`FORMAT`. When the organizer ends the season the seed and the salt are published;
anyone then recomputes the commitment and the seed of every deal the ladder played
(``taki-referee verify-season``).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from typing import Final

import attrs

from referee.core import WorkUnit, derive_seed

__all__ = ["FORMAT", "PER_TABLE", "SEED_BITS", "SHARED", "SeasonSecret", "deal_of", "deal_seed",
           "new_season", "own_deals", "wrong_deal"]

#: The committed text: ``taki-referee-season-v1:<salt>:<seed>`` (the salt as 32 lower-case
#: hex digits, the seed in decimal); the commitment is the SHA-256 of its UTF-8 bytes,
#: in lower-case hex.
FORMAT: Final = "taki-referee-season-v1:{salt}:{seed}"
#: A fresh season's seed: 256 random bits, so that no search over seeds is cheaper than
#: one over SHA-256 itself (the seeds of single deals are 63 bits, and public once played).
SEED_BITS: Final = 256
_SALT: Final = re.compile(r"[0-9a-f]{32}")
#: A ladder game's id: the table (its bots, joined by ','), the deal, the seat rotation.
_GAME_ID: Final = re.compile(r"(?P<table>[^/]+)/deal(?P<deal>\d+)/rot\d+")


@attrs.frozen
class SeasonSecret:
    """A season's seed and the salt of its commitment."""

    seed: int
    salt: str

    def __attrs_post_init__(self) -> None:
        if self.seed < 0 or _SALT.fullmatch(self.salt) is None:
            raise ValueError("a season needs a seed >= 0 and a salt of 32 hex digits")

    @property
    def commitment(self) -> str:
        """What is published at the start: the SHA-256 of :data:`FORMAT`, in hex."""
        text = FORMAT.format(salt=self.salt, seed=self.seed)
        return hashlib.sha256(text.encode()).hexdigest()

    def deal_seed(self, table: Sequence[str], deal: int) -> int:
        return deal_seed(self.seed, table, deal)

    @property
    def finals_seed(self) -> int:
        """The master seed of the season's finals: ``derive_seed(seed, "finals")``, as
        secret as the seed until it is published."""
        return derive_seed(self.seed, "finals")


#: How a ladder's deals derive from its seed (kept in its database): each table's own
#: (:func:`deal_seed`), or, in a database of an earlier version, the same deal numbers
#: of every table alike (``derive_seed(seed, "deal", d)``).
PER_TABLE: Final = "per-table"
SHARED: Final = "shared"


def own_deals(units: Sequence[WorkUnit], seed: int, table: Sequence[str]) -> list[WorkUnit]:
    """``units`` of ``table`` with each game dealt from the table's own deck seed."""
    return [attrs.evolve(unit, games=tuple(attrs.evolve(g, seed=deal_seed(seed, table, g.deal))
                                           for g in unit.games)) for unit in units]


def new_season(seed: int | None = None) -> SeasonSecret:
    """A season with ``seed`` (the organizer's), or a fresh one; the salt is fresh."""
    return SeasonSecret(secrets.randbits(SEED_BITS) if seed is None else seed,
                  secrets.token_hex(16))


def deal_seed(seed: int, table: Sequence[str], deal: int) -> int:
    """The deck seed of deal ``deal`` at ``table`` (its bots, sorted as in the ladder's
    game ids): every seat rotation of the deal plays it, no other table does."""
    return derive_seed(seed, "ladder", ",".join(table), "deal", deal)


def deal_of(game_id: str) -> tuple[tuple[str, ...], int] | None:
    """The table and the deal of a ladder game's id (``a@1,b@2/deal7/rot1``); None
    for an id of another form."""
    found = _GAME_ID.fullmatch(game_id)
    if found is None:
        return None
    return tuple(found["table"].split(",")), int(found["deal"])


def wrong_deal(season: SeasonSecret, game_id: str, seed: int, *,
               shared: bool = False) -> str | None:
    """Why a ladder game's deck seed is not the one the season gives it, or None.
    ``shared``: a ladder of the earlier scheme, whose deals were alike at every table."""
    found = deal_of(game_id)
    if found is None:
        return f"{game_id}: not the id of a ladder game (TABLE/dealN/rotN)"
    table, deal = found
    expected = (derive_seed(season.seed, "deal", deal) if shared
                else season.deal_seed(table, deal))
    if seed != expected:
        return f"{game_id}: dealt from seed {seed}, the season gives {expected}"
    return None
