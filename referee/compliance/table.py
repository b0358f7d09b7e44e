"""A scenario's game: the match runner's own referee, with the house in the other seats.

:class:`ScenarioTable` is a :class:`~referee.match.game.GameReferee` that starts from the
scenario's position and plays every seat but the bot's itself, so the bot meets the
same codec, clock and fault handling as in a match. :class:`RecordingConnection` keeps
every request the bot was sent and what came back, for the report.
"""

from __future__ import annotations

import attrs
from taki_protocol import Answer, Decide, React

from referee.compliance.scenario import Scenario, house_action
from referee.core import (
    STARVED_WAIT_CAP,
    BotFault,
    MatchSettings,
    ScheduledGame,
    TimeBasis,
    TimeControl,
    Verdict,
)
from referee.match import Choice, GameReferee
from referee.rules import Drew
from referee.shell import BotConnection, BotTransport, WaitWatch

__all__ = [
    "ID_STEPS",
    "Exchange",
    "GameStopped",
    "RecordingConnection",
    "ScenarioTable",
    "banked",
    "empty_bank",
]


@attrs.frozen
class Exchange:
    """One request the bot was sent, and its answer or the fault it committed."""

    request: Decide | React
    answer: Answer | None
    fault: BotFault | None


#: The steps between the ids of the requests check sends, in turn: ids increase but
#: are not consecutive (PROTOCOL.md section 3.2), so a bot that expects the next id to be
#: one more than the last fails at once.
ID_STEPS = (1, 3, 2, 7, 1, 12)


class RecordingConnection(BotConnection):
    """A bot connection that records each request and its outcome, and numbers its
    requests with the gaps of :data:`ID_STEPS`."""

    def __init__(self, name: str, process: BotTransport) -> None:
        super().__init__(name, process)
        self.exchanges: list[Exchange] = []
        self._id = 0
        self._sent = 0

    def next_id(self) -> int:
        self._id += ID_STEPS[self._sent % len(ID_STEPS)]
        self._sent += 1
        return self._id

    async def request(
        self, message: Decide | React, deadline_ms: int, *,
        basis: TimeBasis = TimeBasis.WALL, watch: WaitWatch | None = None,
        starved_cap: int = STARVED_WAIT_CAP,
    ) -> Verdict:
        try:
            verdict = await super().request(
                message, deadline_ms, basis=basis, watch=watch, starved_cap=starved_cap)
        except BotFault as fault:
            self.exchanges.append(Exchange(message, None, fault))
            raise
        self.exchanges.append(Exchange(message, verdict.answer, None))
        return verdict


class GameStopped(Exception):
    """Raised out of :meth:`ScenarioTable.run` when the game reaches ``stop_after``."""


#: The bank of a scenario with an empty bank, spent before its first request.
SPENT_BANK_MS = 1
#: The grace of a scenario with an empty bank (PROTOCOL.md section 9: a deadline of 0
#: leaves the bot the referee's grace alone). It checks what the bot does with a deadline
#: of 0 (an answer at once, rather than a crash, a negative sleep or a long search), not
#: how loaded the machine is; in a game the referee's grace (5 ms by default) applies.
EMPTY_BANK_GRACE_MS = 100


def empty_bank(time: TimeControl) -> TimeControl:
    """``time`` with a bank, no per-move cap, no increment and the empty-bank grace."""
    return attrs.evolve(time, move_ms=None, bank_ms=SPENT_BANK_MS, increment_ms=0,
                        grace_ms=max(time.grace_ms, EMPTY_BANK_GRACE_MS))


#: The bank of a scenario with a bank, when the time control has none: a season's
#: (docs/competition.md), far more than one decision or reaction may take.
SCENARIO_BANK_MS = 60_000


def banked(time: TimeControl) -> TimeControl:
    """``time`` with its bank, or a bank of :data:`SCENARIO_BANK_MS` when it has none
    (its per-move cap stays, so ``time_left_ms`` is far above ``deadline_ms``)."""
    if time.bank_ms is not None:
        return time
    return attrs.evolve(time, bank_ms=SCENARIO_BANK_MS)


class ScenarioTable(GameReferee):
    """Referees one scenario: the bot in the scenario's seat, the house elsewhere."""

    def __init__(self, scenario: Scenario, conn: RecordingConnection, time: TimeControl,
                 *, stop_after: int | None = None) -> None:
        """``stop_after``: stop the game (:class:`GameStopped`) instead of sending the
        bot a decision once it has answered that many requests of the game."""
        state = scenario.start()
        seats = tuple(conn.name if seat == scenario.seat else f"house-{seat}"
                      for seat in range(state.players))
        game = ScheduledGame(game_id=f"check/{scenario.name}", block="check", deal=0,
                             rotation=0, seed=0, seats=seats)
        conns = [conn if seat == scenario.seat else None for seat in range(state.players)]
        if scenario.empty_bank:
            time = empty_bank(time)
        elif scenario.bank:
            time = banked(time)
        super().__init__(game, conns, MatchSettings(rules=state.rules, time=time), state)
        if scenario.empty_bank:
            self.clocks[scenario.seat].charge(SPENT_BANK_MS)  # the bank is now 0
        self.scenario = scenario
        self.bot = conn
        self.stop_after = stop_after
        self.first_exchange = len(conn.exchanges)
        self.scripts = {seat: list(moves) for seat, moves in scenario.script.items()}
        #: The bot's answers after which it drew the penalty for a missing "last card".
        self.undeclared: list[Exchange] = []

    @property
    def exchanges(self) -> list[Exchange]:
        """The requests of this game and their outcomes."""
        return self.bot.exchanges[self.first_exchange :]

    async def _start_seat(self, seat: int) -> None:
        if seat == self.scenario.seat:
            await super()._start_seat(seat)

    async def _ask(self, seat: int, react: bool) -> Choice | BotFault:
        if seat != self.scenario.seat:
            action = house_action(self.state, seat, self.scripts.setdefault(seat, []))
            return Choice(action, True, None)
        if not react and self.stop_after is not None and \
                len(self.exchanges) >= self.stop_after:
            raise GameStopped
        return await super()._ask(seat, react)

    def _apply(self, seat: int, choice: Choice) -> None:
        seen = len(self.state.events)
        super()._apply(seat, choice)
        for event in self.state.events[seen:]:
            if isinstance(event, Drew) and event.seat == self.scenario.seat \
                    and event.reason == "last_card" and self.exchanges:
                self.undeclared.append(self.exchanges[-1])
