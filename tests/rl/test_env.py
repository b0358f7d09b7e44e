"""The PettingZoo environment: PettingZoo's own API test, masks that are exactly the
rules engine's legal actions, the +3 Breaker window as turns, and rewards by place."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test

import referee.rl as rl
from referee.rules import Rules, new_game

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("players", [2, 4])
def test_pettingzoo_api_test(players: int) -> None:
    api_test(rl.env(players=players), num_cycles=400, verbose_progress=False)


def rollout(env: rl.TakiEnv, seed: int) -> tuple[dict[str, float], Counter[str]]:
    """A random-masked game to its end, checking every step; the rewards and the
    phases met."""
    env.reset(seed=seed)
    rng = random.Random(seed)
    phases: Counter[str] = Counter()
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        state = env.state
        assert state is not None
        seat = env.possible_agents.index(agent)
        assert seat in state.to_act()
        legal = state.legal_actions(seat)
        mask = observation["action_mask"]
        assert sorted(np.flatnonzero(mask)) == sorted(rl.action_index(a) for a in legal)
        assert len({rl.action_index(a) for a in legal}) == len(legal)  # one index each
        vector = observation["observation"]
        assert vector.shape == (rl.OBSERVATION_SIZE,) and 0 <= vector.min() <= vector.max() <= 1
        assert info["view"]["seat"] == seat
        phases[info["view"]["phase"]] += 1
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return totals, phases


@pytest.mark.parametrize(("players", "flags"), [
    (2, {}),
    (3, {"plus3_rule": True, "crazy_card": True}),
    (4, {"voluntary_draw": True}),
    (5, {"pyramid": True}),
    (10, {"preset": "super-taki-classic"}),
])
def test_masks_are_the_legal_actions_and_rewards_go_by_place(
    players: int, flags: dict[str, object]
) -> None:
    env = rl.env(players=players, **flags)
    for seed in range(3):
        totals, _ = rollout(env, seed)
        state = env.state
        assert state is not None and state.is_over
        places = state.result().places
        for seat, agent in enumerate(env.possible_agents):
            assert totals[agent] == pytest.approx(1 - 2 * (places[seat] - 1) / (players - 1))


def test_the_breaker_window_is_turns_of_the_asked_seats() -> None:
    """Over many 4-player games, a +3 opens the window and each asked seat acts in it."""
    env = rl.env(players=4)
    met: Counter[str] = Counter()
    for seed in range(40):
        _, phases = rollout(env, seed)
        met.update(phases)
    assert met["react"] > 0


def test_the_same_seed_deals_the_same_game() -> None:
    first, second = rl.env(players=3), rl.env(players=3)
    first.reset(seed=9)
    second.reset(seed=9)
    assert first.state is not None and second.state is not None
    assert first.state.hand(0) == second.state.hand(0)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="players must be from 2 to 10"):
        rl.env(players=11)
    env = rl.env(players=2)
    env.reset(seed=1)
    with pytest.raises(ValueError, match="is not legal now"):
        env.step(rl.ACTION_COUNT - 1 if not env.observe(env.agent_selection)["action_mask"][-1]
                 else 0)


def test_action_indices_cover_every_action_kind() -> None:
    seen = set()
    rng = random.Random(3)
    for seed in range(60):
        state = new_game(3, seed, Rules(plus3_rule=True, crazy_card=True))
        while not state.is_over:
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            seen.update(a.kind for a in legal)
            state.apply(rng.choice(legal), seat, last_card=True)
    assert seen == set(range(8))


def test_a_policy_plays_as_a_bot_through_the_sdk(tmp_path: Path) -> None:
    """The example policy bot plays a match through the real protocol without a fault."""
    bot = REPO / "examples" / "rl" / "masked_random_bot.py"
    done = subprocess.run(
        [str(Path(sys.executable).with_name("taki-referee")), "match", f"python {bot}",
         f"python {REPO / 'sample_bots' / 'greedy_bot.py'}", "--games", "4", "--seed", "1",
         "--json", "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    games = json.loads(done.stdout)["games"]
    assert len(games) == 4
    assert all(p["forfeit"] is None for g in games for p in g["players"])


def test_as_choose_maps_the_policy_back_to_the_legal_list() -> None:
    state = new_game(2, 5, Rules())
    seat = state.to_act()[0]
    legal = [a.to_wire() for a in state.legal_actions(seat)]
    from referee.rules import view

    last = rl.action_index(state.legal_actions(seat)[-1])
    choose = rl.as_choose(lambda observation, mask: last)
    assert choose(view(state, seat), legal) == (len(legal) - 1, True)
    with pytest.raises(ValueError, match="masked out"):
        rl.as_choose(lambda observation, mask: rl.ACTION_COUNT - 1)(view(state, seat), legal)
