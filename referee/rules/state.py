"""The game state and its primitives: dealing, drawing, turn order, forfeits.

``GameState`` is mutable, like a chess board: ``apply`` changes it in place and
``copy()`` makes an independent one. Its only randomness is the ``random.Random`` it is
created with, used to shuffle the deck and to reshuffle the discard pile (R20), so the
same seed and the same actions always give the same game.
"""

from __future__ import annotations

import random
from typing import Any

from . import cards
from .actions import Action
from .apply import apply_action, forfeit
from .config import Rules
from .errors import GameOverError, IllegalActionError
from .events import Drew, Event, Reshuffled, SeatEvent
from .legal import legal_actions
from .phases import OVER, PHASE_NAMES, PLAY, REACT
from .results import EndReason, GameResult, game_result

_SNAPSHOT_FIELDS = (
    "players", "sizes", "active", "draw_pile", "discard", "lead", "color", "direction",
    "turn", "phase", "pending", "open_run", "run_color", "run_last", "run_can_close",
    "declared", "window_seat", "window_chain", "reactors", "breakers", "react_declared",
    "stages", "winner", "end_reason", "forfeits", "action_count", "events",
)  # fmt: skip


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, set):
        return frozenset(value)
    return value


class GameState:
    """A Super Taki game in progress. Create it with :func:`new_game`."""

    __slots__ = (
        "_legal",
        "_legal_key",
        "action_count",
        "active",
        "breakers",
        "color",
        "declared",
        "direction",
        "discard",
        "draw_pile",
        "end_reason",
        "events",
        "first_seat",
        "forfeits",
        "hands",
        "lead",
        "n_active",
        "open_run",
        "pending",
        "phase",
        "players",
        "react_declared",
        "reactors",
        "rng",
        "rules",
        "run_can_close",
        "run_color",
        "run_last",
        "sizes",
        "stages",
        "turn",
        "window_chain",
        "window_seat",
        "winner",
    )

    rules: Rules
    players: int
    rng: random.Random
    hands: list[dict[int, int]]
    sizes: list[int]
    active: list[bool]
    n_active: int
    draw_pile: list[int]
    discard: list[int]
    lead: int
    color: int
    direction: int
    turn: int
    first_seat: int
    phase: int
    pending: int
    open_run: int
    run_color: int
    run_last: int
    run_can_close: bool
    declared: bool
    window_seat: int
    window_chain: bool
    reactors: list[int]
    breakers: set[int]
    react_declared: set[int]
    stages: list[int] | None
    winner: int | None
    end_reason: EndReason | None
    forfeits: list[tuple[int, str, str, int]]
    action_count: int
    events: list[Event]
    _legal: list[Action]
    _legal_key: int

    # ----------------------------------------------------------------- queries

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    def to_act(self) -> tuple[int, ...]:
        """The seats that must decide now: the turn player, or every seat still to
        answer in a +3 Breaker window; empty once the game is over."""
        if self.phase == REACT:
            return tuple(self.reactors)
        if self.phase == OVER:
            return ()
        return (self.turn,)

    def hand(self, seat: int) -> list[int]:
        """The cards of ``seat`` as a sorted list of codes (codes are numbered in display
        order: cards.sort_key). The referee's view of every decision starts here
        (benchmarks/ipc.py): most cards of a hand are single."""
        hand = self.hands[seat]
        out: list[int] = []
        for code in sorted(hand):
            count = hand[code]
            if count == 1:
                out.append(code)
            else:
                out += [code] * count
        return out

    def legal_actions(self, seat: int | None = None) -> list[Action]:
        """The legal actions of ``seat`` (default: the turn player). The list is
        shared with the state until the next change: do not modify it."""
        if seat is None:
            seat = self.turn
        if seat != self._legal_key:
            self._legal = legal_actions(self, seat)
            self._legal_key = seat
        return self._legal

    def apply(self, action: Action, seat: int | None = None, *, last_card: bool = False) -> None:
        """Apply a legal action of ``seat`` (default: the turn player).

        ``last_card`` declares "last card!" for this turn (R6). An action that is not
        in ``legal_actions(seat)`` raises :class:`IllegalActionError` and changes
        nothing."""
        if self.phase == OVER:
            raise GameOverError("the game is over")
        if seat is None:
            if self.phase == REACT:
                raise IllegalActionError("in the +3 Breaker window every answer names its seat")
            seat = self.turn
        if seat not in self.to_act():
            raise IllegalActionError(f"seat {seat} is not to act (waiting for {self.to_act()})")
        legal = self.legal_actions(seat)
        if action not in legal:
            raise IllegalActionError(
                f"{action} is not legal for seat {seat} in phase {PHASE_NAMES[self.phase]}; "
                f"legal: {', '.join(str(a) for a in legal)}"
            )
        self.apply_unchecked(action, seat, last_card=last_card)

    def apply_unchecked(self, action: Action, seat: int, *, last_card: bool = False) -> None:
        """Apply an action known to be legal (for search and playouts)."""
        self._legal_key = -1
        apply_action(self, seat, action, last_card)

    def forfeit(self, seat: int, reason: str, detail: str = "") -> None:
        """Remove ``seat`` from the game (R23)."""
        if self.phase == OVER:
            raise GameOverError("the game is over")
        if not self.active[seat]:
            raise IllegalActionError(f"seat {seat} has already left the game")
        self._legal_key = -1
        forfeit(self, seat, reason, detail)

    def result(self) -> GameResult:
        """The ranking (R22, R23); also valid for a game still running."""
        return game_result(self)

    def clear_legal_cache(self) -> None:
        """Forget the legal actions kept from the last request (a new or copied state)."""
        self._legal = []
        self._legal_key = -1

    def copy(self) -> GameState:
        other = GameState.__new__(GameState)
        for name in GameState.__slots__:
            setattr(other, name, getattr(self, name))
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.hands = [dict(h) for h in self.hands]
        other.sizes = list(self.sizes)
        other.active = list(self.active)
        other.draw_pile = list(self.draw_pile)
        other.discard = list(self.discard)
        other.reactors = list(self.reactors)
        other.breakers = set(self.breakers)
        other.react_declared = set(self.react_declared)
        other.stages = None if self.stages is None else list(self.stages)
        other.forfeits = list(self.forfeits)
        other.events = list(self.events)
        other.clear_legal_cache()
        return other

    def snapshot(self) -> tuple[Any, ...]:
        """Everything that defines the state, as comparable, immutable plain data: a
        snapshot kept aside does not change as the game goes on."""
        fields = tuple(_frozen(getattr(self, name)) for name in _SNAPSHOT_FIELDS)
        hands = tuple(tuple(sorted(h.items())) for h in self.hands)
        return (*fields, hands, self.rng.getstate())

    def card_count(self) -> int:
        """Cards in hands, draw pile and discard pile together (always the deck size)."""
        return sum(self.sizes) + len(self.draw_pile) + len(self.discard)

    # -------------------------------------------------------------- primitives

    def next_seat(self, seat: int) -> int:
        """The next seat still in the game after ``seat`` in the current direction."""
        n = self.players
        step = self.direction
        seat = (seat + step) % n
        while not self.active[seat]:
            seat = (seat + step) % n
        return seat

    def seats_after(self, seat: int) -> list[int]:
        """Every other active seat in turn order after ``seat`` (which may have left)."""
        out = []
        for _ in range(self.n_active - self.active[seat]):
            seat = self.next_seat(seat)
            out.append(seat)
        return out

    def take(self, seat: int, code: int) -> None:
        hand = self.hands[seat]
        left = hand[code] - 1
        if left:
            hand[code] = left
        else:
            del hand[code]
        self.sizes[seat] -= 1

    def draw(self, seat: int, count: int, reason: str) -> None:
        """``seat`` draws ``count`` cards, reshuffling the discard pile if needed (R20)."""
        if count > len(self.draw_pile):
            self.reshuffle()
        pile = self.draw_pile
        k = min(count, len(pile))
        taken = pile[len(pile) - k :]
        del pile[len(pile) - k :]
        hand = self.hands[seat]
        for code in taken:
            hand[code] = hand.get(code, 0) + 1
        self.sizes[seat] += k
        self.events.append(Drew("draw", seat, k, reason, tuple(taken)))

    def reshuffle(self) -> None:
        """Shuffle the discard pile, except the Leading Card and the transparent cards
        lying on it, under the draw pile (R20)."""
        discard = self.discard
        i = len(discard) - 1
        while i > 0 and cards.IS_TRANSPARENT[discard[i]]:
            i -= 1
        rest = discard[:i]
        if not rest:
            return
        self.discard = discard[i:]
        self.rng.shuffle(rest)
        self.draw_pile = rest + self.draw_pile
        self.events.append(Reshuffled("reshuffle", len(self.draw_pile)))

    def start_turn(self, seat: int) -> None:
        self.turn = seat
        self.phase = PLAY
        self.declared = False

    def end_turn(self, skip: bool = False) -> None:
        """End the turn player's turn: the "last card" check (R6), then the next seat
        (past a skipped one after a Stop)."""
        seat = self.turn
        penalty = self.rules.last_card_penalty
        if penalty and self.active[seat] and self.sizes[seat] == 1 and not self.declared:
            self.draw(seat, penalty, "last_card")
        nxt = self.next_seat(seat)
        if skip:
            self.events.append(SeatEvent("skip", nxt))
            nxt = self.next_seat(nxt)
        self.start_turn(nxt)

    def finish(self, winner: int | None, reason: EndReason) -> None:
        self.winner = winner
        self.end_reason = reason
        self.phase = OVER
        if winner is not None:
            self.events.append(SeatEvent("win", winner))


def new_game(
    players: int,
    seed: int | random.Random,
    rules: Rules | None = None,
    *,
    first_seat: int = 0,
) -> GameState:
    """Shuffle, deal and flip the first Leading Card (R1-R3).

    ``seed`` is an int or a ``random.Random``; the state keeps its own generator.
    A ``hand_size`` too large for ``players`` raises :class:`~.config.DealError`
    (:meth:`Rules.check_deal`)."""
    if rules is None:
        rules = Rules()
    if not 2 <= players <= 10:
        raise ValueError(f"Super Taki is played by 2 to 10 players, not {players}")
    if not 0 <= first_seat < players:
        raise ValueError(f"first_seat {first_seat} is not a seat of a {players}-player game")
    rules.check_deal(players)
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    deck = rules.deck_cards()
    rng.shuffle(deck)
    s = GameState.__new__(GameState)
    s.rules = rules
    s.players = players
    s.rng = rng
    s.hands = [{} for _ in range(players)]
    s.sizes = [0] * players
    for seat in range(players):
        hand = s.hands[seat]
        for code in deck[len(deck) - rules.hand_size :]:
            hand[code] = hand.get(code, 0) + 1
        del deck[len(deck) - rules.hand_size :]
        s.sizes[seat] = rules.hand_size
    # R2: flip until a colored card leads; colorless cards go to the bottom.
    top = deck.pop()
    while cards.COLOR_OF[top] == cards.NO_COLOR:
        deck.insert(0, top)
        top = deck.pop()
    s.draw_pile = deck
    s.discard = [top]
    s.lead = top
    s.color = cards.COLOR_OF[top]
    s.active = [True] * players
    s.n_active = players
    s.direction = 1
    s.first_seat = first_seat
    s.turn = first_seat
    s.phase = PLAY
    s.pending = 0
    s.open_run = cards.NO_COLOR
    s.run_color = cards.NO_COLOR
    s.run_last = -1
    s.run_can_close = False
    s.declared = False
    s.window_seat = -1
    s.window_chain = False
    s.reactors = []
    s.breakers = set()
    s.react_declared = set()
    s.stages = [rules.hand_size] * players if rules.pyramid else None
    s.winner = None
    s.end_reason = None
    s.forfeits = []
    s.action_count = 0
    s.events = []
    s.clear_legal_cache()
    return s


