"""What the host of a running ladder holds: its control (the active bots, a pause, the
stop) and the events the ladder reports (a game landed, the live ratings changed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
import trio

from referee.core import BotSpec

__all__ = ["GameLanded", "LadderControl", "LadderEvent", "LiveRating", "RatingsChanged"]


@attrs.frozen
class LiveRating:
    """A bot's rating as the games land: its Elo and 95% interval, its rated games,
    whether its placement is over and whether it is in the ladder now."""

    bot: str
    elo: float
    low: float
    high: float
    games: int
    placed: bool
    active: bool


@attrs.frozen
class GameLanded:
    """A game was stored: who sat where (by seat) and their places (1 the best)."""

    game_id: str
    seats: tuple[str, ...]
    places: tuple[int, ...]
    #: The games in the store now.
    stored: int


@attrs.frozen
class RatingsChanged:
    """The live ratings after a game landed, best first."""

    ratings: tuple[LiveRating, ...]


LadderEvent = GameLanded | RatingsChanged


class LadderControl:
    """What the host of a ladder changes while it runs: the active bots, a pause, the
    stop. Its methods are called from the Trio thread."""

    def __init__(self, bots: Sequence[BotSpec] = (), *, paused: bool = False) -> None:
        self._bots: dict[str, BotSpec] = {}
        self._paused = paused
        self._stopping = False
        self._changed = trio.Event()
        #: Bumped by every change of the active bots.
        self._version = 0
        self._ratings: tuple[LiveRating, ...] = ()
        self.set_bots(bots)

    def set_bots(self, bots: Sequence[BotSpec]) -> None:
        """The active bots now (the whole set): the ladder seats only these from now on,
        and every other bot of its database is retired (its games stay, and count)."""
        named: dict[str, BotSpec] = {}
        for bot in bots:
            if bot.remote:
                raise ValueError(f"bot {bot.name!r} is remote: a ladder starts its bots")
            if bot.name in named:
                raise ValueError(f"bot {bot.name!r} is given twice")
            named[bot.name] = bot
        self._bots = named
        self._version += 1
        self._poke()

    @property
    def bots(self) -> tuple[BotSpec, ...]:
        return tuple(self._bots.values())

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self) -> None:
        """Start no new unit of work; the games in flight finish and are stored."""
        self._paused = True
        self._poke()

    def resume(self) -> None:
        self._paused = False
        self._poke()

    def stop(self) -> None:
        """End the ladder once the units in flight are played and stored."""
        self._stopping = True
        self._poke()

    def ratings(self) -> tuple[LiveRating, ...]:
        """The live ratings, best first."""
        return self._ratings

    # What the running ladder reads and sets (not the host's business).

    @property
    def active(self) -> Mapping[str, BotSpec]:
        """The active bots by name."""
        return self._bots

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def version(self) -> int:
        """Bumped by every change of the active bots."""
        return self._version

    @property
    def changed(self) -> trio.Event:
        """Set at the next change of the bots, the pause or the stop."""
        return self._changed

    def publish(self, ratings: tuple[LiveRating, ...]) -> None:
        """The ladder's newest live ratings."""
        self._ratings = ratings

    def _poke(self) -> None:
        self._changed.set()
        self._changed = trio.Event()
