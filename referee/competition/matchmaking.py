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

import bisect
import math
import random
import statistics
from collections.abc import Collection, Mapping, Sequence

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
    the field, if it never did). Only the order of the waits counts: the waits of a
    whole field may all be more by the same number (below 2**47), and the same tables
    are chosen, from the same random numbers."""

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


def _term(entrant: Belief, seated: Belief) -> float:
    """What one bot seated adds to the weight of ``entrant``: the chance the ratings
    have the two in the wrong order times how much of the initial doubt about the pair
    is left."""
    spread = math.hypot(entrant.sigma, seated.sigma)
    left = min(1.0, spread / (math.sqrt(2.0) * INITIAL_SIGMA))
    return misorder(entrant, seated) * math.sqrt(left)


def _weight(total: float, seated: int) -> float:
    """How likely a bot is drawn to join a table of ``seated`` bots, from the ``total``
    of their terms (their mean, at least FLOOR, to the SHARPNESS)."""
    return math.pow(max(FLOOR, total / seated), SHARPNESS)


#: Below every wait: a bot in its placement comes before any other.
_PLACING = 1 << 48


def _ranked(field: Sequence[Entrant], count: int, rng: random.Random,
            placement_games: int) -> list[int]:
    """The indices in ``field`` of the ``count`` bots that come first (placement, then
    the longest waiting), in that order, ties in a random order: a selection on one
    integer key a bot, not a sort of the field's records."""
    keys = [e.games - _PLACING if e.games < placement_games else -e.idle for e in field]
    cut = min(keys) if count == 1 else sorted(keys)[count - 1]  # plain ints: C speed
    first = [i for i, key in enumerate(keys) if key < cut]
    ties = [i for i, key in enumerate(keys) if key == cut]
    chosen = first + rng.sample(ties, count - len(first))
    rng.shuffle(chosen)  # ties go to a random bot
    chosen.sort(key=keys.__getitem__)
    return chosen


def _far(floor: float) -> float:
    """The least ``x`` with ``erfc(x) / 2 <= floor``, a little over (bisection)."""
    low, high = 0.0, 40.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if 0.5 * math.erfc(middle) > floor else (low, middle)
    return high * 1.001


#: Two bots whose means are further apart than this many times the spread of their
#: beliefs have a misorder chance under FLOOR: an opponent that far from every bot
#: seated has exactly the least weight, and its weight need not be computed.
_FAR = _far(FLOOR) * math.sqrt(2.0)


class _Opponents:
    """The bots that may fill the informative seats, sorted by rating once, so that
    each draw computes the weights only of the bots near one seated (the others all
    have the least weight, ``FLOOR ** SHARPNESS``). The draw is the same, in
    distribution, as weighing every bot."""

    def __init__(self, field: Sequence[Entrant], seated: Collection[int]) -> None:
        """The bots of ``field`` but those at ``seated`` (indices)."""
        self.field = field
        self.left = set(range(len(field))).difference(seated)
        mus = [e.belief.mu for e in field]
        self.sigmas = [e.belief.sigma for e in field]
        #: Bots at most twice as unsure as the median are looked for only near a
        #: seated bot; the others (the ratings barely know them) always.
        self.cap = 2.0 * statistics.median(self.sigmas)
        self.wide = [i for i, sigma in enumerate(self.sigmas) if sigma > self.cap]
        self.order = sorted(range(len(field)), key=mus.__getitem__)
        self.mus = [mus[i] for i in self.order]
        self.mu_of = mus
        self.found = set(self.wide)
        self.looked = 0  # the bots seated whose neighbours are in found
        self.totals: dict[int, tuple[int, float]] = {}  # bots seated counted, terms

    def near(self, table: Sequence[Entrant]) -> list[int]:
        """The bots left that may weigh more than the least weight at ``table`` (the
        bots seated since the last call widen what the earlier ones found)."""
        for seated in table[self.looked:]:
            mu, sigma = seated.belief.mu, seated.belief.sigma
            half = _FAR * math.hypot(self.cap, sigma)
            low = bisect.bisect_left(self.mus, mu - half)
            high = bisect.bisect_right(self.mus, mu + half)
            self.found.update(
                i for i in self.order[low:high]
                if abs(self.mu_of[i] - mu) <= _FAR * math.hypot(self.sigmas[i], sigma))
        self.looked = len(table)
        return sorted(self.found & self.left)

    def weight(self, i: int, table: Sequence[Entrant]) -> float:
        """The weight of bot ``i`` at ``table`` (its terms summed once per bot seated)."""
        counted, total = self.totals.get(i, (0, 0.0))
        belief = self.field[i].belief
        for seated in table[counted:]:
            total += _term(belief, seated.belief)
        self.totals[i] = (len(table), total)
        return _weight(total, len(table))

    def draw(self, table: Sequence[Entrant], rng: random.Random) -> Entrant:
        """A bot left, drawn with its weight at ``table``, and no longer left."""
        near = self.near(table)
        weights = [self.weight(i, table) for i in near]
        far = len(self.left) - len(near)
        heavy = math.fsum(weights)
        if far and rng.random() * (heavy + far * FLOOR ** SHARPNESS) >= heavy:
            skip = set(near)
            pick = rng.choice([i for i in self.left if i not in skip])
        else:
            pick = near[rng.choices(range(len(near)), weights=weights)[0]]
        self.left.remove(pick)
        return self.field[pick]


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
    fair = _ranked(field, fair_seats(size), rng, placement_games)
    table = [field[i] for i in fair]
    opponents = _Opponents(field, fair)
    while len(table) < size:
        table.append(opponents.draw(table, rng))
    return tuple(e.name for e in table)
