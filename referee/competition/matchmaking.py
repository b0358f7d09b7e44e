"""Matchmaking for a ladder: which bots meet next. Pure (no clock, no I/O; the only
randomness is the ``random.Random`` the caller passes).

A table is built around one *focus* bot:

* **Placement first.** A bot with fewer than ``placement_games`` games (played or being
  played) is the focus before any other, the one with the fewest games first, so a new
  bot is placed quickly.
* **Then the most uncertain places.** Every other bot's *need* is the number of bots the
  ratings may have on the wrong side of it (the sum over the field of
  ``referee.ratings.online.misorder``), over its games: the focus is the bot whose
  place is least settled for the games it has had, so games go where the ranking is
  unsure while each bot's games stay balanced (a bot with twice the games needs twice
  the doubt to be chosen). No bot is the focus while it has more than ``BALANCE``
  times the games of the field's least played bot out of placement (plus the
  placement), and past that share it is drawn as an opponent only as rarely as one
  the ratings are sure of: two bots the ratings can never tell apart (the same program
  submitted twice) would otherwise take every game.
* **Opponents whose outcome is most uncertain.** Seats are filled one at a time, each
  bot drawn with a weight that grows with how likely it is misordered with the bots
  already seated (a close match, or a bot the ratings know little of), so the table's
  outcome is as uncertain as the field allows; the draw (not the best alone) spreads a
  bot's games over its neighbours.

The table sizes take turns (:func:`next_size`): each size in turn gets the next table,
among the sizes the field is large enough for.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import attrs

from referee.ratings import Belief, misorder

__all__ = ["Doubts", "Entrant", "choose_table", "next_size"]

#: Opponent weights are the misorder chances to this power: higher concentrates the
#: games on the closest bots, lower spreads them.
SHARPNESS = 2.0
#: The least weight of an opponent, before the power: a table is found even when the
#: ratings are sure of every order.
FLOOR = 1e-3
#: A bot is the focus only while its games are at most this many times those of the
#: field's least played bot (placement games added to both).
BALANCE = 8


@attrs.frozen
class Entrant:
    """A bot that may be seated: its rating and the games it has (stored, or chosen and
    not yet finished)."""

    name: str
    belief: Belief
    games: int


def next_size(sizes: Sequence[int], tables: Mapping[int, int], field: int) -> int | None:
    """The table size of the next table: of the ``sizes`` the ``field`` of bots can
    fill, the one that had the fewest ``tables`` so far (the smaller on a tie); None when
    the field cannot fill any."""
    usable = [s for s in sizes if 2 <= s <= field]
    if not usable:
        return None
    return min(usable, key=lambda s: (tables.get(s, 0), s))


class Doubts:
    """Each bot's doubt (the sum over the rest of the field of
    ``referee.ratings.online.misorder``), kept as the field and its ratings change: a
    bot whose rating moved costs a pass over the field, not every pair of bots (which is
    a million pairs at a thousand bots, at every table)."""

    def __init__(self) -> None:
        self._beliefs: dict[str, Belief] = {}
        self._sums: dict[str, float] = {}

    def sync(self, field: Sequence[Entrant]) -> Mapping[str, float]:
        """The doubts of ``field``'s bots, after taking in its changes since the last
        call (a bot gone, come, or whose belief is another object)."""
        now = {e.name: e.belief for e in field}
        for name in [n for n in self._beliefs if n not in now]:
            gone = self._beliefs.pop(name)
            del self._sums[name]
            for other, belief in self._beliefs.items():
                self._sums[other] -= misorder(belief, gone)
        for name, belief in now.items():
            old = self._beliefs.get(name)
            if old is belief:
                continue
            total = 0.0
            for other, theirs in self._beliefs.items():
                if other == name:
                    continue
                gained = misorder(theirs, belief)  # the same either way round
                total += gained
                self._sums[other] += gained if old is None else gained - misorder(theirs, old)
            self._beliefs[name] = belief
            self._sums[name] = total
        return self._sums


def _need(entrant: Entrant, field: Sequence[Entrant],
          doubts: Mapping[str, float] | None) -> float:
    if doubts is not None:
        return doubts[entrant.name] / (1 + entrant.games)
    doubt = sum(misorder(entrant.belief, other.belief) for other in field
                if other.name != entrant.name)
    return doubt / (1 + entrant.games)


def _share(field: Sequence[Entrant], placement_games: int) -> float:
    """The most games (placement added) a bot may have and still be the focus or drawn
    as a close opponent: ``BALANCE`` times those of the least played bot out of
    placement (newcomers are placed first whatever the others have)."""
    placed = [e.games for e in field if e.games >= placement_games]
    return BALANCE * (min(placed) + placement_games) if placed else math.inf


def _weight(entrant: Entrant, table: Sequence[Entrant], balanced: bool) -> float:
    """How likely ``entrant`` is drawn to join ``table``: its mean misorder chance with
    the bots seated, the least when it has more than its share of games."""
    if not balanced:
        return math.pow(FLOOR, SHARPNESS)
    doubt = sum(misorder(entrant.belief, seated.belief) for seated in table) / len(table)
    return math.pow(max(FLOOR, doubt), SHARPNESS)


def choose_table(
    field: Sequence[Entrant], size: int, rng: random.Random, *, placement_games: int,
    doubts: Doubts | None = None,
) -> tuple[str, ...] | None:
    """The bots of the next table of ``size`` (the focus first), or None when the field
    has fewer bots than that. With ``doubts`` (kept from one table to the next) a large
    field costs a pass over it per table and per bot whose rating changed since."""
    if size < 2:
        raise ValueError(f"a table seats at least 2 bots, not {size}")
    if len(field) < size:
        return None
    if len({e.name for e in field}) != len(field):
        raise ValueError("a bot is twice in the field")
    sums = None if doubts is None else doubts.sync(field)
    order = list(field)
    rng.shuffle(order)  # ties go to a random bot
    newcomers = [e for e in order if e.games < placement_games]
    cap = _share(order, placement_games)
    if newcomers:
        focus = min(newcomers, key=lambda e: e.games)
    else:
        focus = max((e for e in order if e.games + placement_games <= cap),
                    key=lambda e: _need(e, field, sums))
    table = [focus]
    rest = [e for e in order if e.name != focus.name]
    while len(table) < size:
        weights = [_weight(e, table, e.games + placement_games <= cap) for e in rest]
        pick = rng.choices(range(len(rest)), weights=weights)[0]
        table.append(rest.pop(pick))
    return tuple(e.name for e in table)
