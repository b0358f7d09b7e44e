"""The scenarios reach their situations whatever the bot answers, and the last-card ones
really test the duty: played in-process by the rules core, with no bot process."""

from __future__ import annotations

import random
from typing import Any

import pytest

from referee.compliance.catalogue import LENGTH, SCENARIOS
from referee.compliance.scenario import Scenario, house_action
from referee.rules import view
from referee.rules.events import Drew
from referee.rules.phases import REACT

Request = tuple[str, dict[str, Any], list[dict[str, Any]]]


def play(scenario: Scenario, seed: int, *, declare: bool = True) -> tuple[list[Request], Any]:
    """Play a scenario with random choices in the bot's seat; the requests it was sent."""
    rng = random.Random(seed)
    state = scenario.start()
    scripts = {seat: list(moves) for seat, moves in scenario.script.items()}
    requests: list[Request] = []
    while not state.is_over:
        for seat in state.to_act():
            if state.is_over or seat not in state.to_act():
                continue
            if seat != scenario.seat:
                state.apply(house_action(state, seat, scripts.setdefault(seat, [])), seat,
                            last_card=True)
                continue
            legal = state.legal_actions(seat)
            kind = "react" if state.phase == REACT else "decide"
            requests.append((kind, view(state, seat), [a.to_wire() for a in legal]))
            state.apply(rng.choice(legal), seat, last_card=declare)
    return requests, state


def test_names_are_unique() -> None:
    names = [s.name for s in SCENARIOS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario_reaches_its_situation_whatever_the_bot_answers(scenario: Scenario) -> None:
    assert scenario.asked, "a scenario names the requests it is about"
    for seed in range(12):
        requests, state = play(scenario, seed)
        for asked in scenario.asked:
            assert any(asked.matches(*r) for r in requests), (seed, asked.describe())
        assert state.is_over and state.action_count <= max(LENGTH, state.rules.action_limit)
        assert state.active[scenario.seat]


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.group == "last card"],
                         ids=lambda s: s.name)
def test_last_card_scenario_penalizes_a_missing_declaration(scenario: Scenario) -> None:
    """A bot that never declares draws the penalty in every last-card scenario (the
    breaker case only when it breaks, which some seed does); one that declares never."""
    penalized = set()
    for seed in range(12):
        for declare in (False, True):
            _, state = play(scenario, seed, declare=declare)
            drew = any(isinstance(e, Drew) and e.seat == scenario.seat
                       and e.reason == "last_card" for e in state.events)
            assert not (declare and drew)
            if drew:
                penalized.add(seed)
    assert penalized


def test_react_scenarios_cover_holder_and_non_holder() -> None:
    react_legal = {tuple(sorted(a.kinds)) for s in SCENARIOS for a in s.asked
                   if a.request == "react"}
    assert react_legal == {("break", "pass"), ("pass",)}


def test_every_phase_is_asked() -> None:
    phases = {a.phase for s in SCENARIOS for a in s.asked}
    assert phases == {"play", "run", "again", "king", "react"}


def test_both_presets_every_flag_and_table_sizes() -> None:
    rules = [s.start().rules for s in SCENARIOS]
    assert {r.name for r in rules} == {"super-taki-2018", "super-taki-classic"}
    assert any(r.voluntary_draw for r in rules) and any(r.crazy_card for r in rules)
    assert any(r.plus3_rule for r in rules) and any(r.pyramid for r in rules)
    assert any(r.last_card_penalty == 0 for r in rules)
    assert any(r.hand_size != 8 for r in rules)
    assert any(r.scoring.colorless != 20 for r in rules)
    assert any(r.action_limit < 10 for r in rules)
    assert {s.start().players for s in SCENARIOS} >= {2, 10}
    assert max(max(s.start().sizes) for s in SCENARIOS) >= 40
