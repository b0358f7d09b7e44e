"""Replays: saved and loaded whole, re-played by the rules core, and refused when they
belong to another rules revision or were tampered with."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from referee.replay import VERSION, Replay, ReplayError, verify
from referee.rules import RULES_REVISION, Rules


def played(seed: int = 3, players: int = 3) -> Replay:
    """A whole game of random legal actions, recorded as the referee records it."""
    replay = Replay(game_id="g", seed=seed, rules=Rules(), bots=[f"b{i}" for i in range(players)])
    game = replay.new_game()
    rng = random.Random(seed)
    while not game.is_over:
        for seat in game.to_act():
            action = rng.choice(game.legal_actions(seat))
            last_card = rng.random() < 0.5
            replay.record_action(seat, action, last_card)
            game.apply(action, seat, last_card=last_card)
            if game.is_over:
                break
    replay.finish(game.result())
    return replay


def test_a_saved_replay_loads_and_verifies(tmp_path: Path) -> None:
    replay = played()
    path = tmp_path / "g.json"
    replay.save(path)
    data = json.loads(path.read_text())
    assert data["version"] == VERSION and data["rules_revision"] == RULES_REVISION
    loaded = Replay.load(path)
    assert loaded == replay
    assert list(verify(loaded).places) == data["result"]["places"]


@pytest.mark.parametrize(
    ("version", "revision"), [(1, None), (VERSION, RULES_REVISION - 1), (VERSION, None)]
)
def test_a_replay_of_another_rules_revision_is_refused(version: int, revision: int | None) -> None:
    data = played().to_wire()
    data["version"] = version
    if revision is None:
        del data["rules_revision"]
    else:
        data["rules_revision"] = revision
    with pytest.raises(ReplayError, match=r"rules revision .* this referee plays revision"):
        Replay.from_wire(data)


def test_an_unknown_version_is_refused() -> None:
    data = played().to_wire()
    data["version"] = VERSION + 1
    with pytest.raises(ReplayError, match="unsupported replay version"):
        Replay.from_wire(data)


def test_a_tampered_result_does_not_verify() -> None:
    replay = played()
    assert replay.result is not None
    replay.result["places"] = list(reversed(replay.result["places"]))
    with pytest.raises(ReplayError, match="does not reach its recorded result"):
        verify(replay)


def test_a_log_entry_that_does_not_apply_is_named() -> None:
    replay = played()
    replay.log.insert(0, dict(replay.log[0], seat=(replay.log[0]["seat"] + 1) % 3))
    with pytest.raises(ReplayError, match="log entry 0 does not apply"):
        verify(replay)
