"""A continuous ladder: games keep being played among the active bots, at the tables
the ratings need most, while bots come and go.

A ladder is a league whose next units of work are chosen as the executor asks for
them. Each choice is a *meeting*: a table of bots (``referee.competition.matchmaking``)
that plays ``deals`` deals, each at every seat rotation, each rotation by fresh bot
processes (one unit of work per rotation, as in a league). A meeting's deals are the
table's next ones, so its games have the ids a round-robin league among the same bots
would give them (``a@1,b@2/deal7/rot1``), in the league's tables, and ``ratings`` and
``report`` read them. Their decks are the table's own (``referee.competition.season``:
from the season's secret seed, written nowhere a bot or a page reads). The meeting is
stored (``ResultStore.add_meeting``) before its first game: a ladder restarted after a
kill plays its unfinished meetings first, their units whole with the stored games only
replayed to the bots, and every game is stored once (its id is the key).

The ratings are updated as every game lands (``referee.ratings.online``); the full fit
of ``referee.ratings`` is there on demand (:func:`full_ratings`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import random
from collections import Counter
from collections.abc import AsyncGenerator, Callable
from typing import Final

import attrs
import trio

from referee.competition.aggregates import Season, SeasonError
from referee.competition.ladder_control import (
    GameLanded,
    LadderControl,
    LadderEvent,
    LiveRating,
    RatingsChanged,
)
from referee.competition.matchmaking import Entrant, choose_table, next_size
from referee.competition.season import PER_TABLE, SHARED, new_season, own_deals
from referee.config import available_cpus
from referee.core import (
    BotSpec,
    GameOutcome,
    MatchSettings,
    WorkUnit,
    derive_seed,
    table_units,
)
from referee.league import (
    LeagueJob,
    Meeting,
    ResultStore,
    StoreError,
    choose_executor,
    rated_games,
    record_of,
)
from referee.ratings import (
    RATING_MODELS,
    Belief,
    OnlineRatings,
    RatingModel,
    RatingReport,
    model_named,
    rate,
)
from referee.rules import RULES_REVISION, Rules

__all__ = ["LadderSettings", "full_ratings", "run_ladder"]

#: Where the ladder counts the bots' waits back from (matchmaking's ``idle``): above any
#: count of tables, below matchmaking's mark of a bot in its placement.
_WAITED: Final = 1 << 40
#: Fields of more bots than this are matched in a worker thread: a table among a thousand
#: bots costs a few milliseconds, which the event loop does not wait for while bots'
#: clocks run; smaller fields cost well under one and stay on it.
_IN_LOOP_FIELD: Final = 200


@attrs.frozen
class LadderSettings:
    """How a ladder plays (``check`` says what is wrong, in one line)."""

    #: How its games are refereed (the master seed is the ladder's: ``seed``).
    match: MatchSettings = attrs.field(factory=MatchSettings)
    #: The table sizes, which take turns; a size is used once enough bots are active.
    table_sizes: tuple[int, ...] = (2,)
    #: The deals of a meeting, each played at every seat rotation.
    deals: int = 1
    #: A new bot's placement phase: its first games come before anyone else's.
    placement_games: int = 10
    #: The season's seed (``referee.competition.season``), secret while the ladder runs:
    #: each table's deals derive from it, and the pairings; None: the database's (fresh
    #: when it is created).
    seed: int | None = None
    concurrency: int = attrs.field(factory=available_cpus)
    #: Referee worker processes (``--workers``); None: the games are played here.
    workers: int | None = None
    #: A Dask scheduler (``--dask HOST:PORT``); None: no cluster.
    dask: str | None = None
    #: None: the default of the table sizes (``referee.ratings.leaderboard.default_model``).
    rating_model: RatingModel | None = None

    def check(self) -> None:
        """ValueError, with one line that says why, for settings a ladder cannot use."""
        if not self.table_sizes or any(not 2 <= s <= 10 for s in self.table_sizes):
            raise ValueError(f"table sizes must be between 2 and 10, got {self.table_sizes}")
        if len(set(self.table_sizes)) != len(self.table_sizes):
            raise ValueError(f"a table size is given twice: {self.table_sizes}")
        for name in ("deals", "concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.placement_games < 0:
            raise ValueError(f"placement_games must be at least 0, got {self.placement_games}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        if self.workers is not None and self.dask is not None:
            raise ValueError("play on worker processes or on a Dask cluster, not both")
        if self.rating_model is not None and self.rating_model not in RATING_MODELS:
            raise ValueError(f"unknown rating model {self.rating_model!r}")


def _identity(seed: int, rules: Rules) -> str:
    return (f"seed={seed};rules={sorted(rules.to_wire().items())};"
            f"rules_revision={RULES_REVISION}")


@attrs.frozen
class _Start:
    """What a ladder reads of its database when it starts."""

    seed: int
    #: PER_TABLE or SHARED.
    deals: str
    #: The season's aggregates (the ladder keeps them folded as its games land).
    season: Season
    #: The meetings chosen so far, of each table size.
    sizes: Counter[int]
    #: The meetings not finished, and the ids of their games that were stored.
    meetings: list[Meeting]
    stored: set[str]
    #: The games stored (with a result or voided).
    stored_count: int
    #: The live ratings of the stored games, rated in the order they finished.
    online: OnlineRatings


def _open(store: ResultStore, settings: LadderSettings) -> _Start:
    store.claim()
    if store.meta("league") is not None:
        raise StoreError(f"{store.path} holds a league: a ladder needs a database of its own")
    default = new_season().seed if settings.seed is None else settings.seed
    seed = int(store.setting("seed", str(default)))
    if settings.seed is not None and seed != settings.seed:
        raise StoreError(f"{store.path} holds a ladder of another seed ({seed}, not"
                         f" {settings.seed}); use another database or the same seed")
    store.bind("ladder", _identity(seed, settings.match.rules))
    store.note("rules", json.dumps(settings.match.rules.to_wire()))
    store.note("time", json.dumps(attrs.asdict(settings.match.time)))
    store.note("rating_model", settings.rating_model or "")
    # The ratings come from the season's aggregates, folded up to the last stored game
    # (only the games stored since the last fold are read): a start takes seconds.
    season = Season(store.path)
    try:
        season.fold()
        online = OnlineRatings(beliefs=season.beliefs())
        sizes = season.meeting_sizes()
        meetings = season.open_meetings()
    except BaseException:
        season.close()
        raise
    stored = {game.game_id for meeting in meetings
              for unit in table_units(meeting.bots, meeting.first_deal,
                                      meeting.first_deal + meeting.deals, seed)
              for game in unit.games if store.has_game(game.game_id)}
    deals = store.setting("deals", SHARED if sum(sizes.values()) else PER_TABLE)
    return _Start(seed, deals, season, sizes, meetings, stored,
                  store.game_count() + store.voided_count(), online)


class _Ladder:
    """One run of a ladder: its state lives on the Trio thread."""

    def __init__(self, store: ResultStore, settings: LadderSettings, control: LadderControl,
                 start: _Start, on_event: Callable[[LadderEvent], None] | None) -> None:
        self.store = store
        self.settings = settings
        self.control = control
        self.seed = start.seed
        self.per_table = start.deals == PER_TABLE
        self.on_event = on_event
        self.writer = trio.CapacityLimiter(1)
        self.online = start.online
        self.season = start.season
        self.stored_count = start.stored_count
        self.rng = random.Random(derive_seed(start.seed, "matchmaking",
                                             sum(start.sizes.values())))
        #: Every bot seen in this run: a unit in flight finds its bots even after they
        #: left the ladder.
        self.specs: dict[str, BotSpec] = {}
        #: The meetings of each size (each table's next deal is the database's).
        self.sizes: Counter[int] = start.sizes
        #: The meetings chosen in this run, and the count then of each bot's last one
        #: (or of its joining, for a bot not seated yet): how long it waited
        #: (matchmaking's ``idle``).
        self.chosen = 0
        self.last_seated: dict[str, int] = {}
        #: Meetings not finished: the units not handed out yet, the games not stored.
        self.queued: dict[str, list[WorkUnit]] = {}
        self.left: dict[str, int] = {}
        self.meeting_of: dict[str, str] = {}
        #: Games chosen and not stored yet, by bot.
        self.pending: Counter[str] = Counter()
        #: The field matchmaking chooses from, an entrant per active bot kept until
        #: its bot is in ``changed``; ``order``: the active bots, sorted, as of the
        #: control's ``field_version``.
        self.entrants: dict[str, Entrant] = {}
        self.changed: set[str] = set()
        self.order: list[str] = []
        self.field_version = -1
        self.registered = -1
        for meeting in start.meetings:
            self._seated(meeting.bots)
            self._queue(meeting, start.stored)

    # ------------------------------------------------------------ meetings

    def _seated(self, table: tuple[str, ...]) -> None:
        """A meeting of ``table`` was chosen (or is open at the start)."""
        self.chosen += 1
        for bot in table:
            self.last_seated[bot] = self.chosen
        self.changed.update(table)

    def _queue(self, meeting: Meeting, stored: set[str]) -> None:
        units = list(table_units(meeting.bots, meeting.first_deal,
                                 meeting.first_deal + meeting.deals, self.seed))
        if self.per_table:  # each table's deals its own: no replay tells another's
            units = own_deals(units, self.seed, meeting.bots)
        games = [g for unit in units for g in unit.games if g.game_id not in stored]
        self.queued[meeting.name] = [u for u in units
                                     if any(g.game_id not in stored for g in u.games)]
        self.left[meeting.name] = len(games)
        for game in games:
            self.meeting_of[game.game_id] = meeting.name
            for bot in game.seats:
                self.pending[bot] += 1
                self.changed.add(bot)

    async def _choose(self) -> tuple[str, ...] | None:
        """The bots of the next table (in table order), or None."""
        active = self.control.active
        size = next_size(self.settings.table_sizes, self.sizes, len(active))
        if size is None:
            return None
        if self.field_version != self.control.version:  # bots joined or left
            self.field_version = self.control.version
            self.order = sorted(active)
        for name in self.changed:
            self.entrants.pop(name, None)
        self.changed.clear()
        field = [self.entrants.get(name) or self._entrant(name) for name in self.order]
        choose = functools.partial(choose_table, field, size, self.rng,
                                   placement_games=self.settings.placement_games)
        chosen = choose() if len(field) <= _IN_LOOP_FIELD else (
            await trio.to_thread.run_sync(choose))
        return None if chosen is None else tuple(sorted(chosen))

    def _entrant(self, name: str) -> Entrant:
        """``name`` as matchmaking sees it, kept until its rating, its games or its last
        table change (:attr:`changed`): its wait is counted back from
        :data:`_WAITED`, not from the tables chosen so far, so that it does not change
        with every table; the waits of the field differ by the same number, and the
        tables chosen are the same (only their order counts)."""
        belief = self.online.belief(name)
        entrant = Entrant(name, belief, belief.games + self.pending[name],
                          _WAITED - self.last_seated.setdefault(name, self.chosen))
        self.entrants[name] = entrant
        return entrant

    def _meeting(self, table: tuple[str, ...]) -> Meeting:
        """The next meeting of ``table``, at its next deal (blocking)."""
        first = self.season.next_deal(table)
        deals = self.settings.deals
        return Meeting(f"{','.join(table)}/deals{first}-{first + deals - 1}", table, first,
                       deals)

    def _ready_unit(self) -> WorkUnit | None:
        """The next unit of an open meeting whose bots are all active."""
        for units in self.queued.values():
            if units and all(name in self.control.active for name in units[0].games[0].seats):
                return units.pop(0)
        return None

    async def units(self) -> AsyncGenerator[WorkUnit, None]:
        control = self.control
        while not control.stopping:
            changed = control.changed
            if self.registered != control.version:
                self.registered = control.version
                self.specs.update(control.active)
                entrants = [(b.name, b.display) for b in control.active.values()]
                await trio.to_thread.run_sync(self.store.register_bots, entrants,
                                              limiter=self.writer)
                self._publish()
                continue
            if control.paused:
                await changed.wait()
                continue
            unit = self._ready_unit()
            if unit is not None:
                yield unit
                continue
            table = await self._choose()
            if table is None:
                await changed.wait()
                continue
            meeting = await trio.to_thread.run_sync(self._meeting, table, limiter=self.writer)
            await trio.to_thread.run_sync(self.store.add_meeting, meeting, limiter=self.writer)
            self.sizes[len(table)] += 1
            self._seated(table)
            self._queue(meeting, set())

    # ------------------------------------------------------------- results

    def record(self, outcome: GameOutcome) -> bool:
        """Store a game (in a worker thread), then account for it on the Trio thread."""
        if not self.store.record(record_of(outcome)):
            return False
        finished = trio.from_thread.run_sync(self._landed, outcome)
        if finished is not None:
            self.store.finish_meeting(finished)
        # The season's aggregates follow (a kill before this fold, or a database too busy
        # for it, leaves them at an earlier game: the next fold, here, in the pages or at
        # the next start, goes on from there).
        with contextlib.suppress(SeasonError):
            self.season.fold()
        return True

    def _landed(self, outcome: GameOutcome) -> str | None:
        """Rate a stored game and tell the host; the meeting it finished, if it did."""
        self.stored_count += 1
        self.changed.update(outcome.game.seats)
        if outcome.voided:  # stored without a result: nothing to rate or to show
            for bot in outcome.game.seats:
                self.pending[bot] -= 1
        else:
            seats = sorted(outcome.seats, key=lambda s: s.seat)
            self.online.update({s.bot: s.place for s in seats})
            for seat in seats:
                self.pending[seat.bot] -= 1
            if self.on_event is not None:
                self.on_event(GameLanded(outcome.game.game_id, tuple(s.bot for s in seats),
                                         tuple(s.place for s in seats), self.stored_count))
        self._publish()
        meeting = self.meeting_of.pop(outcome.game.game_id, None)
        if meeting is None:
            return None
        self.left[meeting] -= 1
        if self.left[meeting] > 0:
            return None
        del self.left[meeting], self.queued[meeting]
        return meeting

    def _publish(self) -> None:
        beliefs = self.online.beliefs()
        for name in self.control.active:
            beliefs.setdefault(name, Belief())
        placement = self.settings.placement_games
        ratings = tuple(sorted(
            (LiveRating(name, b.mu, *b.interval, b.games, b.games >= placement,
                        name in self.control.active) for name, b in beliefs.items()),
            key=lambda r: (-r.elo, r.bot)))
        self.control.publish(ratings)
        if self.on_event is not None:
            self.on_event(RatingsChanged(ratings))


async def run_ladder(
    store: ResultStore,
    settings: LadderSettings,
    control: LadderControl,
    on_event: Callable[[LadderEvent], None] | None = None,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the ladder of ``store`` until ``control.stop()`` (then return once the units
    in flight are stored) or cancellation (the games in flight are played again at the
    next start, and no game is stored twice). ``on_event`` hears of every stored game
    and every change of the ratings, on the Trio thread (it must not block).
    ``task_status.started()`` comes once the database is bound and read."""
    settings.check()
    executor = choose_executor(settings.concurrency, workers=settings.workers,
                               dask=settings.dask)
    start = await trio.to_thread.run_sync(_open, store, settings)
    try:
        ladder = _Ladder(store, settings, control, start, on_event)
        job = LeagueJob(
            # The seed stays out of the replays (and every page): the season's secret.
            settings=attrs.evolve(settings.match, master_seed=None),
            bots=ladder.specs,
            record=ladder.record,
            is_stored=store.has_game,
        )
        task_status.started()
        units = ladder.units()
        try:
            await executor.play(job, units)
        finally:
            await units.aclose()
    finally:
        start.season.close()


async def full_ratings(store: ResultStore, *, resamples: int = 200,
                       model: RatingModel | None = None) -> RatingReport | None:
    """The full fit of the stored games with bootstrap intervals (in a thread); None
    before the first game."""
    def fit() -> RatingReport | None:
        games = rated_games(store)
        if not games:
            return None
        return rate(games, resamples=resamples,
                    model=model or model_named(store.meta("rating_model")))
    return await trio.to_thread.run_sync(fit)

