"""Playing games with real bots: the referee's main loop.

Everything a bot does wrong becomes a typed forfeit (R23) or, with the ``strikes``
policy, a default action and a strike; nothing a bot does can stop a game from ending
or lose its result. Every action and forfeit is recorded in a replay that the pure
rules core can re-play (``referee.core.replay.verify``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import trio
from taki_protocol import (
    FORFEIT_REASONS,
    Decide,
    GameOver,
    GameRules,
    GameStart,
    React,
    Standing,
    TimeLimits,
)
from taki_protocol import Forfeit as WireForfeit

from referee.core import (
    SEND_MS,
    Blame,
    BotCrashed,
    BotFault,
    BotIllegalAction,
    BotTimeout,
    FaultPolicy,
    FaultReason,
    GameOutcome,
    InfraEvent,
    MatchSettings,
    Replay,
    ScheduledGame,
    SeatClock,
    SeatForfeit,
    SeatOutcome,
    TimeRecorder,
    TimeUse,
    WaitTimeout,
    judge,
)
from referee.rules import REACT, Action, GameResult, GameState, events_since, new_game, view
from referee.rules import actions as A
from referee.shell import BotConnection, WaitWatch


def safe_filename(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", text).strip("_") or "game"


def replay_path(replay_dir: Path, game_id: str) -> Path:
    """Where a game's replay goes: a readable name, plus a short hash of the exact id
    when the name had to change (so ids that differ only in punctuation never share
    a file)."""
    name = safe_filename(game_id)
    if name != game_id:
        name += "-" + hashlib.sha256(game_id.encode()).hexdigest()[:8]
    return replay_dir / f"{name}.json"


@attrs.frozen
class Choice:
    """What a seat chose, and how long it took to say it (None: the referee chose for
    it, under the strikes policy)."""

    action: Action
    last_card: bool
    elapsed_ms: float | None


def _default_action(legal: Sequence[Action]) -> Action:
    """What a struck bot plays: a draw when it may draw, else the most passive choice."""
    for kind in (A.DRAW, A.PASS, A.END_TURN, A.LEAVE_RUN_OPEN, A.CLOSE_RUN):
        for action in legal:
            if action.kind == kind:
                return action
    return legal[0]


class GameVoided(Exception):
    """A timeout was the machine's fault: the game stops without a result, to be played
    again (``referee.core.fairness``)."""

    def __init__(self, event: InfraEvent) -> None:
        super().__init__(event.describe())
        self.event = event


class GameReferee:
    """Referees one game between connected bots."""

    def __init__(
        self,
        game: ScheduledGame,
        conns: Sequence[BotConnection | BotFault | None],
        settings: MatchSettings,
        state: GameState | None = None,
    ) -> None:
        """``conns`` holds each seat's bot: a connection, or the fault that keeps the
        seat's bot from playing (None: the bot is not running). ``state`` is the
        position the game starts from (default: the deal of the game's seed)."""
        self.game = game
        self.unavailable: dict[int, BotFault] = {
            seat: BotCrashed("the bot is not running") if conn is None else conn
            for seat, conn in enumerate(conns)
            if not isinstance(conn, BotConnection)
        }
        self.conns = [conn if isinstance(conn, BotConnection) else None for conn in conns]
        self.settings = settings
        n = len(game.seats)
        self.state: GameState = state if state is not None else new_game(
            n, game.seed, settings.rules, first_seat=game.first_seat)
        self.replay = Replay(game.game_id, game.seed, settings.rules, list(game.seats),
                             first_seat=game.first_seat, master_seed=settings.master_seed)
        self.clocks = [SeatClock(settings.time) for _ in range(n)]
        self.cursors = [0] * n
        self.strikes = [0] * n
        self.times = TimeRecorder(n)
        #: The forfeit details the bots are told, by seat (BotFault.public_detail); the
        #: state and the replay keep the full ones.
        self.told: dict[int, str] = {}
        #: Which play of the game this is (0: the first), for infrastructure events.
        self.attempt = 0
        #: The infrastructure fault that voids the game, once one happened.
        self.void: InfraEvent | None = None
        # Timeouts are judged only where every seat's bot is a local process, which a
        # fresh one can replace, and whose CPU time the referee reads.
        meters = [None if c is None else c.cpu for c in self.conns]
        self._judged = all(c.cpu is not None for c in self.conns if c is not None)
        others = [tuple(m for j, m in enumerate(meters) if j != seat and m is not None)
                  for seat in range(n)]
        self._basis = settings.time.time_basis
        self._starved_cap = settings.starved_cap
        #: Each seat's watch of its waits (one serves them all), where they are judged.
        self._watches = [None if c is None or not self._judged else WaitWatch(c.cpu, others[seat])
                         for seat, c in enumerate(self.conns)]

    # ----------------------------------------------------------------- faults

    async def _forfeit(self, seat: int, fault: BotFault) -> None:
        if self.state.is_over or not self.state.active[seat]:
            return
        self.state.forfeit(seat, fault.reason, fault.detail)
        self.replay.record_forfeit(seat, fault.reason, fault.detail)
        self.told[seat] = fault.public_detail
        conn = self.conns[seat]
        if conn is not None:
            await conn.fail(fault)

    def _fault_of(self, seat: int) -> BotFault:
        """Why the bot of a seat that cannot be asked anything cannot be."""
        conn = self.conns[seat]
        if conn is None:
            return self.unavailable[seat]
        if conn.fault is not None:
            return conn.fault
        return conn.crashed()

    def _strike(self, seat: int, fault: BotFault) -> bool:
        """With the strikes policy, absorb a timeout or illegal answer (True)."""
        if self.settings.fault_policy is not FaultPolicy.STRIKES:
            return False
        if not isinstance(fault, BotTimeout | BotIllegalAction):
            return False
        conn = self.conns[seat]
        if conn is None or not conn.alive:  # e.g. its input was cut in the middle of a message
            return False
        self.strikes[seat] += 1
        return self.strikes[seat] < self.settings.strikes

    # ------------------------------------------------------------------- play

    async def run(self) -> GameResult:
        state = self.state
        for seat in range(len(self.conns)):
            await self._start_seat(seat)
        if self.void is not None:
            raise GameVoided(self.void)
        while not state.is_over:
            if state.phase == REACT:
                await self._react_window()
            else:
                seat = state.turn
                outcome = await self._ask(seat, react=False)
                if self.void is not None:
                    raise GameVoided(self.void)
                if isinstance(outcome, Choice) and seat in state.to_act():
                    self._apply(seat, outcome)  # the usual case, without another await
                else:
                    await self._settle(seat, outcome)
        result = state.result()
        self.replay.finish(result)
        await self._game_over(result)
        return result

    async def _start_seat(self, seat: int) -> None:
        """Send the seat's bot ``game_start``; a bot that cannot play forfeits, unless
        the machine starved its start (the game is then voided)."""
        conn = self.conns[seat]
        if conn is None or not conn.alive:
            fault = self._fault_of(seat)
            if conn is not None and isinstance(fault, BotTimeout):
                self._judge_timeout(seat, conn, fault)
            if self.void is None:
                await self._forfeit(seat, fault)
            return
        try:
            await conn.send(self._game_start(seat), timeout_s=conn.wait_s(SEND_MS))
        except BotFault as fault:
            await self._forfeit(seat, fault)

    def _game_start(self, seat: int) -> GameStart:
        return GameStart(
            game_id=self.game.game_id,
            seat=seat,
            players=len(self.game.seats),
            names=list(self.game.seats),
            rules=self._wire_rules,
            time=self._wire_time,
        )

    @functools.cached_property
    def _wire_rules(self) -> GameRules:
        rules = self.settings.rules.to_wire()
        preset = rules.pop("name")
        rules.pop("deck", None)
        return GameRules(preset=preset, flags=rules)

    @functools.cached_property
    def _wire_time(self) -> TimeLimits:
        time = self.settings.time
        return TimeLimits(
            move_ms=time.move_ms,
            bank_ms=time.bank_ms,
            increment_ms=time.increment_ms,
            reaction_ms=time.reaction_ms,
        )

    def _since(self, seat: int) -> int:
        """Where the seat's new events start; from now on they count as sent."""
        since, self.cursors[seat] = self.cursors[seat], len(self.state.events)
        return since

    def _view(self, seat: int) -> dict[str, Any]:
        return view(self.state, seat, self._since(seat))

    async def _ask(self, seat: int, react: bool) -> Choice | BotFault:
        """One request to one seat; returns its choice or the fault it committed."""
        conn = self.conns[seat]
        if conn is None or not conn.alive:
            return self._fault_of(seat)
        legal = list(self.state.legal_actions(seat))
        clock = self.clocks[seat]
        wire_legal = [a.to_wire() for a in legal]
        request = React if react else Decide
        allowed = clock.reaction_allowed_ms() if react else clock.allowed_ms()
        deadline = clock.reaction_deadline_ms() if react else clock.deadline_ms()
        watch = self._watches[seat]
        try:
            # The view and the legal actions come from the rules engine, whose views
            # are plain data by construction (tests/rules check it), the times from the
            # clock: the request is built without its checks (tests/match checks that
            # the referee's requests pass them).
            msg = request.trusted(
                id=conn.next_id(),
                view=self._view(seat),
                legal=wire_legal,
                time_left_ms=clock.time_left_ms(),
                deadline_ms=allowed,
            )
            wait = await conn.request(msg, deadline, basis=self._basis, watch=watch,
                                      starved_cap=self._starved_cap)
            answer = wait.answer
            assert answer is not None  # request() returns the verdict of an answer
            elapsed = wait.charged_ms
            # A reaction is judged on its own allowance; a decision is charged to the bank.
            verdict = clock.check_reaction(elapsed) if react else clock.charge(elapsed)
        except BotTimeout as fault:
            return self._timed_out(seat, conn, fault, react, allowed)
        except BotFault as fault:
            return fault
        if verdict.late:
            late = WaitTimeout(verdict.describe(), wait.figures)
            return self._timed_out(seat, conn, late, None, allowed)
        self.times.record(seat, elapsed, allowed)
        if not 0 <= answer.choice < len(legal):
            return BotIllegalAction(
                f"choice {answer.choice} is not an index of the {len(legal)} legal actions"
            )
        return Choice(legal[answer.choice], answer.last_card, elapsed)

    def _timed_out(
        self, seat: int, conn: BotConnection, fault: BotTimeout, react: bool | None,
        allowed: int,
    ) -> BotTimeout:
        """A late request: its time is charged (``react`` False: a decision that the
        clock has not charged yet) and counted in time use at its allowance, as a near
        miss; when the wait's figures show the machine's fault, the game is voided."""
        clock = self.clocks[seat]
        if react is False:
            clock.charge(clock.deadline_ms() + 1)
        conn.abandon_request()
        self.times.record(seat, float(allowed), allowed)
        self._judge_timeout(seat, conn, fault)
        return fault

    def _judge_timeout(self, seat: int, conn: BotConnection, fault: BotTimeout) -> None:
        """Void the game when the figures of the seat's timed-out wait show the
        machine's fault; a game that ended is never voided."""
        figures = fault.figures if isinstance(fault, WaitTimeout) else None
        if figures is None or self.state.is_over or not self._judged or self.void is not None:
            return
        blame = judge(figures, self.settings.time.grace_ms)
        if blame is not Blame.BOT:
            self.void = InfraEvent(self.game.game_id, self.attempt, seat,
                                   self.game.seats[seat], blame, fault.detail, figures)

    async def _settle(self, seat: int, outcome: Choice | BotFault) -> None:
        state = self.state
        if state.is_over or seat not in state.to_act():
            return
        if isinstance(outcome, BotFault):
            if not self._strike(seat, outcome):
                await self._forfeit(seat, outcome)
                return
            outcome = Choice(_default_action(state.legal_actions(seat)), False, None)
        self._apply(seat, outcome)

    def _apply(self, seat: int, choice: Choice) -> None:
        """Play a seat's choice: every action of a game goes through here."""
        self.state.apply(choice.action, seat, last_card=choice.last_card)
        self.replay.record_action(seat, choice.action, choice.last_card, choice.elapsed_ms)

    async def _react_window(self) -> None:
        """R17: every other seat is asked at once, each with its own deadline."""
        seats = self.state.to_act()
        answers: dict[int, Choice | BotFault] = {}

        async def ask(seat: int) -> None:
            answers[seat] = await self._ask(seat, react=True)

        async with trio.open_nursery() as nursery:
            for seat in seats:
                nursery.start_soon(ask, seat)
        if self.void is not None:
            raise GameVoided(self.void)
        for seat in seats:  # in turn order: the outcome does not depend on timing
            await self._settle(seat, answers[seat])

    async def _game_over(self, result: GameResult) -> None:
        ranking = [
            Standing(
                seat=seat,
                place=result.places[seat],
                points=result.points[seat],
                forfeit=self._wire_forfeit(result, seat),
            )
            for seat in result.order()
        ]
        async def tell(seat: int, conn: BotConnection) -> None:
            events = events_since(self.state, seat, self._since(seat))
            with contextlib.suppress(BotFault):
                await conn.send(
                    GameOver(game_id=self.game.game_id, ranking=ranking, events=events),
                    timeout_s=conn.wait_s(SEND_MS),
                )

        async with trio.open_nursery() as nursery:
            for seat, conn in enumerate(self.conns):
                if conn is not None and conn.alive and self.state.active[seat]:
                    nursery.start_soon(tell, seat, conn)

    def _wire_forfeit(self, result: GameResult, seat: int) -> WireForfeit | None:
        """A seat's forfeit as the bots see it: the short detail, never the full one
        (which may hold a crashed bot's stderr)."""
        for f in result.forfeits:
            if f.seat == seat:
                reason = f.reason if f.reason in FORFEIT_REASONS else "protocol"
                return WireForfeit(reason=reason, detail=self.told.get(seat, ""))
        return None


def lost_by(game: ScheduledGame, result: GameResult, bot: str) -> bool:
    """Whether ``bot`` placed below another seat of the game (a shared place is no loss)."""
    if bot not in game.seats:
        return False
    return result.places[game.seats.index(bot)] > min(result.places)


def wants_replay(settings: MatchSettings, game: ScheduledGame, result: GameResult) -> bool:
    """Whether the settings keep the replay of this game."""
    if settings.replay_dir is None:
        return False
    return settings.replays_lost_by is None or lost_by(game, result, settings.replays_lost_by)


def outcome_of(
    game: ScheduledGame,
    result: GameResult,
    replay: Path | None,
    times: Sequence[TimeUse] | None = None,
    logs: Sequence[Path | None] | None = None,
) -> GameOutcome:
    """The outcome of a game: ``times`` and ``logs`` hold each seat's answer times and
    bot log (none when not given)."""
    forfeits = {f.seat: SeatForfeit(FaultReason(f.reason), f.detail) for f in result.forfeits}
    players = len(game.seats)
    times = times or [TimeUse()] * players
    logs = logs or [None] * players
    seats = tuple(
        SeatOutcome(seat, bot, result.places[seat], result.points[seat], forfeits.get(seat),
                    times[seat], logs[seat])
        for seat, bot in enumerate(game.seats)
    )
    return GameOutcome(game, seats, result.actions, result.reason, replay, result.winner)


