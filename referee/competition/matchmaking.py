"""Matchmaking for a ladder: which bots meet next. Pure (no clock, no I/O; the only
randomness is the ``random.Random`` the caller passes).

A table of ``size`` seats is filled in two parts:

* **Fair seats: the bots that waited longest.** The first ``ceil(size / 2)`` seats go
  to the bots whose last table lies furthest back (their ``idle``: the tables chosen
  since they last sat at one), so every active bot sits at a table at least once every
  ``field / ceil(size / 2)`` tables or so, whatever the ratings think of it: its games
  are at least half its fair share in any stretch of play, and two bots the ratings
  can never tell apart (the same program submitted twice, four times) cannot take the
  others' games. A bot in its placement (fewer than ``placement_games`` games, played
  or being played) is seated first, the one with the fewest games first, so a new bot
  is placed quickly.
* **Informative seats: the opponents whose outcome is most uncertain.** The other
  seats are filled one at a time, each bot drawn with a weight that grows with how
  likely the ratings have it and the bots already seated in the wrong order (a close
  match, or a bot the ratings know little of) and with how much a game can still move
  that order (the spread of their beliefs: two bots that met a thousand times and stay
  a coin flip teach nothing more). A draw, not the best alone, spreads a bot's games
  over its neighbours.

The table sizes take turns (:func:`next_size`): each size in turn gets the next table,
among the sizes the field is large enough for.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import attrs

from referee.ratings import Belief, misorder

__all__ = ["Entrant", "choose_table", "fair_seats", "next_size"]

#: Opponent weights are the misorder chances to this power: higher concentrates the
#: games on the closest bots, lower spreads them.
SHARPNESS = 2.0
#: The least weight of an opponent, before the power: a table is found even when the
#: ratings are sure of every order.
FLOOR = 1e-3
#: How unsure the ratings are of a bot never rated (one standard deviation, Elo).
INITIAL_SIGMA = Belief().sigma


@attrs.frozen
class Entrant:
    """A bot that may be seated: its rating, the games it has (stored, or chosen and
    not yet finished), and the tables chosen since it last sat at one (since it joined
    the field, if it never did)."""

    name: str
    belief: Belief
    games: int
    idle: int = 0


def next_size(sizes: Sequence[int], tables: Mapping[int, int], field: int) -> int | None:
    """The table size of the next table: of the ``sizes`` the ``field`` of bots can
    fill, the one that had the fewest ``tables`` so far (the smaller on a tie); None when
    the field cannot fill any."""
    usable = [s for s in sizes if 2 <= s <= field]
    if not usable:
        return None
    return min(usable, key=lambda s: (tables.get(s, 0), s))


def fair_seats(size: int) -> int:
    """The seats of a table of ``size`` that go to the bots that waited longest."""
    return (size + 1) // 2


def _weight(entrant: Entrant, table: Sequence[Entrant]) -> float:
    """How likely ``entrant`` is drawn to join ``table``: the mean, over the bots
    seated, of the chance the ratings have the two in the wrong order times how much
    of the initial doubt about the pair is left."""
    total = 0.0
    for seated in table:
        spread = math.hypot(entrant.belief.sigma, seated.belief.sigma)
        left = min(1.0, spread / (math.sqrt(2.0) * INITIAL_SIGMA))
        total += misorder(entrant.belief, seated.belief) * math.sqrt(left)
    return math.pow(max(FLOOR, total / len(table)), SHARPNESS)


def choose_table(
    field: Sequence[Entrant], size: int, rng: random.Random, *, placement_games: int
) -> tuple[str, ...] | None:
    """The bots of the next table of ``size`` (the fair seats first, the longest
    waiting first), or None when the field has fewer bots than that."""
    if size < 2:
        raise ValueError(f"a table seats at least 2 bots, not {size}")
    if len(field) < size:
        return None
    if len({e.name for e in field}) != len(field):
        raise ValueError("a bot is twice in the field")
    order = list(field)
    rng.shuffle(order)  # ties go to a random bot
    order.sort(key=lambda e: (e.games >= placement_games,
                              e.games if e.games < placement_games else -e.idle))
    table = order[:fair_seats(size)]
    rest = order[fair_seats(size):]
    while len(table) < size:
        weights = [_weight(e, table) for e in rest]
        pick = rng.choices(range(len(rest)), weights=weights)[0]
        table.append(rest.pop(pick))
    return tuple(e.name for e in table)
