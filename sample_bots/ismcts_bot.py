"""A search bot: information-set Monte Carlo search over worlds sampled from its view.

For each decision with a choice, the bot

1. samples a world it cannot tell from the real game (``referee.rules.determinize``: the
   other hands and the draw pile dealt at random from the cards it has not seen), then,
   for every iteration, deals those unseen cards again (much cheaper than a new world).
   It keeps what the events prove: without voluntary draws, a seat that drew for want of
   a play held no playable card at that moment, so the cards it still holds from that
   hand are dealt from the cards that were not playable then;
2. plays every legal action in that world, each followed by the same playout (common
   random numbers: two actions are compared on the same cards and the same luck): all
   seats play greedy_bot's heuristic with a share of random moves for up to
   ``PLAYOUT_DEPTH`` actions, after which the hand sizes judge the position;
3. plays the action with the best mean reward over the worlds.

The search is flat (its tree stops at the bot's own decision): deeper trees over the
following actions did not play better against greedy_bot (benchmarks/README.md). It
searches for ``min(MS, a third of the request's deadline_ms)``.

    python sample_bots/ismcts_bot.py [MS] [SEED]

MS: the most milliseconds a decision may take (default 300). Needs the referee's package
(``referee.rules``) beside ``taki_protocol``: run it with the referee's Python.
"""

from __future__ import annotations

import math
import os
import random
import sys
import time
from typing import Any

from taki_protocol import GameStart, run_bot

from referee.rules import PHASE_NAMES, Action, GameState, Rules, cards, determinize
from referee.rules import actions as A

MS = 300
rng = random.Random()
#: The playouts' own generator, reseeded so that every action of a world meets the same luck.
luck = random.Random(0)
#: Actions a playout makes before the hand sizes judge the position.
PLAYOUT_DEPTH = 20
#: The share of random moves in a playout.
EPSILON = 0.2
#: How many cards of difference make a position nearly won (the reward's scale).
SCALE = 3.0


class Game:
    """What the bot knows of the current game: its rules, its time, every event."""

    rules = Rules()
    events: list[dict[str, Any]] = []
    first_lead: int | None = None
    budget_s = MS / 1000


def on_game_start(message: GameStart) -> None:
    Game.rules = Rules.preset(message.rules.preset, **message.rules.flags)
    Game.events = []
    Game.first_lead = None


def on_request(request: dict[str, Any]) -> None:
    Game.budget_s = min(MS, request["deadline_ms"] / 3) / 1000


def choose(view: dict[str, Any], legal: list[dict[str, Any]]) -> tuple[int, bool]:
    if not Game.events and not any(e["type"] == "play" for e in view["events"]):
        Game.first_lead = cards.parse(view["leading_card"])
    Game.events.extend(view["events"])
    if len(legal) == 1:
        return 0, True
    full = dict(view, events=Game.events)
    return search(full, legal, time.monotonic() + Game.budget_s), True


# --------------------------------------------------------------------------- search


def search(view: dict[str, Any], legal: list[dict[str, Any]], deadline: float) -> int:
    """The index in ``legal`` of the action with the best mean reward."""
    seat = view["seat"]
    try:
        world = determinize(view, rng, Game.rules)
    except ValueError as exc:  # events missed: play the first action rather than crash
        print(f"ismcts: no search ({exc})", file=sys.stderr)
        return 0
    lacks = lacking(view)
    totals: dict[Action, float] = {}
    worlds = 0
    while worlds == 0 or time.monotonic() < deadline:
        redeal(world, seat, lacks)
        worlds += 1
        seed = rng.getrandbits(32)
        for action in world.legal_actions(seat):  # the same in every world: own hand
            trial = world.copy()
            trial.apply_unchecked(action, seat, last_card=True)
            luck.seed(seed)
            totals[action] = totals.get(action, 0.0) + playout(trial, seat)
    index = {Action.from_wire(a): i for i, a in enumerate(legal)}
    best = max((a for a in totals if a in index), key=totals.__getitem__, default=None)
    return 0 if best is None else index[best]


def redeal(world: GameState, seat: int, lacks: dict[int, tuple[frozenset[int], int]]) -> None:
    """Deal the cards ``seat`` has not seen (the other hands and the draw pile) again, in
    the same sizes; a seat in ``lacks`` holds at least its size minus the cards it drew
    since (the cards left of that hand) out of the cards that were not playable."""
    pool = list(world.draw_pile)
    others = [o for o in range(world.players) if o != seat]
    for other in others:
        for code, count in world.hands[other].items():
            pool += [code] * count
    rng.shuffle(pool)
    for other in others:
        hand: dict[int, int] = {}
        need = world.sizes[other]
        if other in lacks:
            playable, drawn = lacks[other]
            old = need - drawn
            rest = []
            for code in pool:
                if old > 0 and code not in playable:
                    hand[code] = hand.get(code, 0) + 1
                    old -= 1
                    need -= 1
                else:
                    rest.append(code)
            pool = rest
        for code in pool[len(pool) - need:]:
            hand[code] = hand.get(code, 0) + 1
        del pool[len(pool) - need:]
        world.hands[other] = hand
    world.draw_pile = pool
    world.events = []  # a playout needs none, and copies stay cheap


def playout(world: GameState, seat: int) -> float:
    """``seat``'s reward after a heuristic playout: 1 for first place, -1 for last, in
    between by the hand sizes when the game is not over after ``PLAYOUT_DEPTH``."""
    for _ in range(PLAYOUT_DEPTH):
        if world.is_over:
            break
        acting = world.to_act()[0]
        world.apply_unchecked(policy(world, acting), acting, last_card=True)
    if world.is_over:
        place = world.result().places[seat]
        return 1 - 2 * (place - 1) / (world.players - 1)
    sizes = world.sizes
    best_other = min(s for o, s in enumerate(sizes) if o != seat and world.active[o])
    return math.tanh((best_other - sizes[seat]) / SCALE)


# ------------------------------------------------------------------ what the events prove


def lacking(view: dict[str, Any]) -> dict[int, tuple[frozenset[int], int]]:
    """For each other seat whose last draw "for want of a play" is still telling (no
    voluntary draws, no hands passed since): the cards it could have played then, and the
    number of cards it has drawn since (that draw included)."""
    out: dict[int, tuple[frozenset[int], int]] = {}
    if Game.rules.voluntary_draw:
        return out
    lead = color = -1
    if Game.first_lead is not None:
        lead, color = Game.first_lead, cards.COLOR_OF[Game.first_lead]
    for event in view["events"]:
        kind = event["type"]
        if kind == "play":
            code = cards.parse(event["card"])
            if cards.IS_TRANSPARENT[code]:
                continue
            lead = code
            if code == cards.CHANGE_COLOR:
                color = cards.parse_color(event["color"])
            elif cards.COLOR_OF[code] >= 0:
                color = cards.COLOR_OF[code]
        elif kind == "play_combo":
            color = cards.parse_color(event["color"])
            lead = cards.card(color, cards.PLUS)
        elif kind == "hands_passed":
            out.clear()
        elif kind == "draw" and event["seat"] != view["seat"]:
            who = event["seat"]
            if event["reason"] == "no_play" and lead >= 0 and color >= 0:
                out[who] = (_playable(lead, color), event["count"])
            elif who in out:
                out[who] = (out[who][0], out[who][1] + event["count"])
    return out


def _playable(lead: int, color: int) -> frozenset[int]:
    """The cards playable at the start of a turn on ``lead`` in ``color`` (no +2 chain)."""
    figure = cards.FIGURE_OF[lead] if cards.COLOR_OF[lead] >= 0 else -1
    return frozenset(
        code for code in range(cards.CARD_COUNT)
        if cards.COLOR_OF[code] < 0 or cards.COLOR_OF[code] == color
        or cards.FIGURE_OF[code] == figure
    )


# ------------------------------------------------------------------ the playout policy

_RUN = PHASE_NAMES.index("run")
_FIGURE = cards.FIGURE_OF
_COLOR = cards.COLOR_OF
#: Inside a run: numbers first, the action card that should act last.
_RUN_ORDER = {cards.TAKI: 29, cards.CHANGE_DIRECTION: 28, cards.STOP: 27,
              cards.PLUS_TWO: 26, cards.PLUS: 25}
_KIND_SCORES = {A.BREAK: 100, A.PLAY_COMBO: 50, A.END_TURN: -50, A.CLOSE_RUN: 1}
#: Answers to a +2 chain, by figure.
_CHAIN_SCORES = {cards.PLUS_TWO: 50, cards.PLUS_THREE_FIG: 45, cards.KING_FIG: 5}
#: A number card's value in tenths: higher numbers go first.
_TENTHS = [cards.NUMBER_VALUES[_FIGURE[c]] / 10 if cards.IS_NUMBER[c] else 0.0
           for c in range(cards.CARD_COUNT)]


def policy(world: GameState, seat: int) -> Action:
    """greedy_bot's scoring on the engine's card codes, with ``EPSILON`` random moves."""
    legal = world.legal_actions(seat)
    if len(legal) == 1:
        return legal[0]
    if luck.random() < EPSILON:
        return luck.choice(legal)
    counts = [0, 0, 0, 0]
    for code, n in world.hands[seat].items():
        if _COLOR[code] >= 0:
            counts[_COLOR[code]] += n
    best, best_score = legal[0], -1e9
    for action in legal:
        score = _score(world, seat, action, counts)
        if score > best_score:
            best, best_score = action, score
    return best


def _score(world: GameState, seat: int, action: Action, counts: list[int]) -> float:
    kind = action.kind
    if kind != A.PLAY:
        return _KIND_SCORES.get(kind, -10 * action.count if kind == A.DRAW else 0)
    code, size = action.card, world.sizes[seat]
    figure, color = _FIGURE[code], _COLOR[code]
    if world.pending:
        return _CHAIN_SCORES.get(figure, 0)
    if world.phase == _RUN:
        if color < 0:
            return -10 if code == cards.SUPER_TAKI else -20
        return _RUN_ORDER.get(figure, 30)
    if color < 0:
        if code == cards.PLUS_THREE:
            return 40
        if code == cards.CHANGE_COLOR:
            # Name the color the hand holds most of.
            return (-5 if size > 2 else 20) - (counts[action.color] < max(counts))
        if code == cards.SUPER_TAKI:
            return -8 + 4 * counts[world.color]
        if code == cards.KING:
            return -10 if size > 2 else 20
        if code == cards.BREAKER:
            return -30
        return 10 * (size - 1 - world.sizes[_previous(world, seat)])  # Crazy Card
    base = 3 * counts[color]
    if figure == cards.TAKI:
        return base + 5 * counts[color]
    if figure == cards.PLUS_TWO or figure == cards.STOP:
        low = min((n for o, n in enumerate(world.sizes) if o != seat and n), default=8) <= 2
        return base + (14 if low else 8)
    if figure == cards.PLUS:
        return base + (12 if counts[color] > 1 else -2)
    if figure == cards.CHANGE_DIRECTION:
        return base + 4
    return base + 6 + _TENTHS[code]


def _previous(world: GameState, seat: int) -> int:
    """The previous seat still in the game: the one whose hand a Crazy Card passes here."""
    for _ in range(world.players - 1):
        seat = (seat - world.direction) % world.players
        if world.active[seat]:
            break
    return seat


if __name__ == "__main__":
    if len(sys.argv) > 1:
        MS = int(sys.argv[1])
    if len(sys.argv) > 2:
        rng.seed(int(sys.argv[2]))
    run_bot(choose, name="ismcts", on_game_start=on_game_start, on_request=on_request)
    # Exit at once, without the interpreter's clean-up of the search's objects (PROTOCOL.md
    # section 3.6: the referee waits only a moment after shutdown or error).
    sys.stderr.flush()
    os._exit(0)
