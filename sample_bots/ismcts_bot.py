"""An information-set Monte Carlo tree search bot (single observer).

Each iteration samples a world the bot cannot tell from the real game
(``referee.rules.determinize``: the other hands and the draw pile dealt at random from
the unseen cards), walks the search tree down the actions legal in that world (UCB1 over
how often each action was available), adds one node, plays the game on with a light
heuristic, and backs up every seat's reward from the places (or, past a depth limit,
from the hand sizes). It searches for a share of the time it has and keeps a safety
margin: the time per decision is ``min(MS, a third of the move's limit)``.

    python sample_bots/ismcts_bot.py [MS] [SEED]

MS: the most milliseconds a decision may take (default 300). Needs the referee's package
(``referee.rules``) beside ``taki_protocol``: run it with the referee's Python.
"""

from __future__ import annotations

import math
import random
import sys
import time
from typing import Any

from taki_protocol import GameStart, run_bot

from referee.rules import Action, GameState, Rules, cards, determinize
from referee.rules import actions as A

MS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else None)
#: Actions a playout makes before the hand sizes judge the position.
PLAYOUT_DEPTH = 60
EXPLORATION = 0.7


class Game:
    """What the bot knows of the current game: its rules, its time, every event."""

    rules = Rules()
    budget_s = MS / 1000
    reaction_s = MS / 1000
    events: list[dict[str, Any]] = []


def on_game_start(message: GameStart) -> None:
    Game.rules = Rules.preset(message.rules.preset, **message.rules.flags)
    Game.budget_s = min(MS, message.time.move_ms / 3) / 1000
    Game.reaction_s = min(MS, message.time.reaction_ms / 3) / 1000
    Game.events = []


class Node:
    __slots__ = ("available", "children", "reward", "visits")

    def __init__(self) -> None:
        self.children: dict[str, Node] = {}
        self.visits = 0
        self.available = 0
        self.reward = 0.0  # for the seat that chose the action leading here


def rewards(state: GameState) -> list[float]:
    """Every seat's reward: by place at the end, else by hand size."""
    n = state.players
    if state.is_over:
        places = state.result().places
    else:
        sizes = [s if state.active[i] else 999 for i, s in enumerate(state.sizes)]
        places = tuple(1 + sum(1 for o in sizes if o < s) for s in sizes)
    return [1 - 2 * (p - 1) / (n - 1) for p in places]


#: Cards a playout keeps for later: they match anything, so they are worth most late.
WILD = {cards.CHANGE_COLOR, cards.SUPER_TAKI, cards.KING, cards.BREAKER, cards.CRAZY}


def playout_action(legal: list[Action]) -> Action:
    """A light heuristic: break a +3, else play a colored card, else a wild one, else
    whatever is left (draw, end the turn), each at random among its kind."""
    for kind in (A.BREAK, A.PLAY_COMBO):
        chosen = [a for a in legal if a.kind == kind]
        if chosen:
            return chosen[0]
    plays = [a for a in legal if a.kind == A.PLAY]
    colored = [a for a in plays if a.card not in WILD]
    if colored:
        return rng.choice(colored)
    if plays:
        return rng.choice(plays)
    closing = [a for a in legal if a.kind == A.CLOSE_RUN]
    return closing[0] if closing else rng.choice(legal)


def search(view: dict[str, Any], legal: list[dict[str, Any]], budget_s: float) -> int:
    wanted = {str(Action.from_wire(a)): i for i, a in enumerate(legal)}
    root = Node()
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        world = determinize(view, rng, Game.rules)
        node, path = root, []
        # Selection and expansion, down the actions legal in this world.
        while not world.is_over:
            acting = world.to_act()[0]
            options = {str(a): a for a in world.legal_actions(acting)}
            for key in options:
                child = node.children.get(key)
                if child is not None:
                    child.available += 1
            untried = [k for k in options if k not in node.children]
            if untried:
                key = rng.choice(untried)
                node.children[key] = child = Node()
                child.available = 1
                world.apply(options[key], acting, last_card=True)
                path.append((child, acting))
                break
            key = max(options, key=lambda k: _ucb(node.children[k]))
            node = node.children[key]
            world.apply(options[key], acting, last_card=True)
            path.append((node, acting))
        # Playout.
        for _ in range(PLAYOUT_DEPTH):
            if world.is_over:
                break
            acting = world.to_act()[0]
            world.apply(playout_action(world.legal_actions(acting)), acting, last_card=True)
        outcome = rewards(world)
        for visited, acting in path:
            visited.visits += 1
            visited.reward += outcome[acting]
    best = max(
        (key for key in root.children if key in wanted),
        key=lambda k: root.children[k].visits,
        default=None,
    )
    return wanted[best] if best is not None else 0


def _ucb(node: Node) -> float:
    if node.visits == 0:
        return math.inf
    return node.reward / node.visits + EXPLORATION * math.sqrt(
        math.log(max(node.available, 1)) / node.visits)


def choose(view: dict[str, Any], legal: list[dict[str, Any]]) -> tuple[int, bool]:
    Game.events.extend(view["events"])
    if len(legal) == 1:
        return 0, True
    full = dict(view, events=Game.events)
    budget = Game.reaction_s if view["phase"] == "react" else Game.budget_s
    return search(full, legal, budget), True


if __name__ == "__main__":
    run_bot(choose, name="ismcts", on_game_start=on_game_start)
