"""The PettingZoo AEC environment of Super Taki over the pure rules core.

Agents ``player_0`` .. ``player_{N-1}`` sit in seats 0 .. N-1. One agent acts at a time:
the one whose turn it is, or in a +3 Breaker window (R17) each asked seat in turn order,
as the referee settles the answers. Every action is declared with "last card!" (R6):
the environment makes the declaration for the agent, so the action space holds the
game's choices only. The game's end gives each agent a reward from its place (R22):
``1 - 2 (place - 1) / (N - 1)``, so the winner gets 1, the last -1, and tied players the
same. Rewards are 0 before the end.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from numpy.typing import NDArray
from pettingzoo import AECEnv

from referee.rl.encoding import ACTION_COUNT, OBSERVATION_SIZE, action_index, encode_view
from referee.rules import Action, GameState, Rules, new_game, view

__all__ = ["TakiEnv", "env"]


def env(players: int = 2, **rule_flags: Any) -> TakiEnv:
    """A Super Taki environment for ``players`` (2 to 10) under the ``super-taki-2018``
    rules with ``rule_flags`` (RULES.md, "Variants"; ``preset="super-taki-classic"``
    for the classic deck)."""
    preset = rule_flags.pop("preset", "super-taki-2018")
    return TakiEnv(players, Rules.preset(preset, **rule_flags))


class TakiEnv(AECEnv[str, dict[str, NDArray[Any]], int]):
    """Super Taki for ``players`` under ``rules``; see the module's docstring."""

    metadata = {"name": "super_taki_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, players: int, rules: Rules) -> None:
        super().__init__()
        if not 2 <= players <= 10:
            raise ValueError(f"players must be from 2 to 10, got {players}")
        rules.check_deal(players)
        self.players = players
        self.rules = rules
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self._observation_space = gymnasium.spaces.Dict({
            "observation": gymnasium.spaces.Box(0.0, 1.0, (OBSERVATION_SIZE,), np.float32),
            "action_mask": gymnasium.spaces.Box(0, 1, (ACTION_COUNT,), np.int8),
        })
        self._action_space = gymnasium.spaces.Discrete(ACTION_COUNT)
        self.state: GameState | None = None
        self._rng = np.random.default_rng()

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._observation_space

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._action_space

    # ------------------------------------------------------------------ the game

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        deal = int(self._rng.integers(0, 2**63 - 1))
        self.state = new_game(self.players, deal, self.rules)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._select()

    def _game(self) -> GameState:
        if self.state is None:
            raise RuntimeError("call reset() before using the environment")
        return self.state

    def _select(self) -> None:
        """The next agent to act, with its legal actions and raw view in its infos."""
        state = self._game()
        if state.is_over:
            return
        seat = state.to_act()[0]
        self.agent_selection = self.possible_agents[seat]
        self._legal = {action_index(a): a for a in state.legal_actions(seat)}
        self.infos[self.agent_selection] = {"view": view(state, seat)}

    def legal_actions(self, agent: str) -> list[Action]:
        """The rules engine's legal actions of ``agent`` now (none unless it acts)."""
        if agent != self.agent_selection or self._game().is_over:
            return []
        return list(self._legal.values())

    def observe(self, agent: str) -> dict[str, NDArray[Any]]:
        state = self._game()
        seat = self.possible_agents.index(agent)
        acting = not state.is_over and agent == self.agent_selection
        mask = np.zeros(ACTION_COUNT, dtype=np.int8)
        if acting:
            mask[list(self._legal)] = 1
        return {"observation": encode_view(view(state, seat, len(state.events)), acting),
                "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._game()
        if action is None or int(action) not in self._legal:
            raise ValueError(f"{agent}: action {action} is not legal now (see the action_mask)")
        self._cumulative_rewards[agent] = 0.0
        seat = self.possible_agents.index(agent)
        state.apply(self._legal[int(action)], seat, last_card=True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if state.is_over:
            result = state.result()
            n = self.players
            for s, name in enumerate(self.possible_agents):
                self.rewards[name] = 1.0 - 2.0 * (result.places[s] - 1) / (n - 1)
                self.terminations[name] = True
        else:
            self._select()
        self._accumulate_rewards()

    def render(self) -> None:
        """No rendering: ``self.state`` and ``referee.rules.view`` show the game."""

    def close(self) -> None:
        self.state = None
