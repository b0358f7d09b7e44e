"""Replays: everything needed to re-play a game, and the check that it re-plays.

A replay is a JSON document: the seed, the rule set, the seats, every action and forfeit
in the order the referee applied them, and the result. ``verify`` re-simulates it with
the pure rules core and checks that it reaches the same result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs

from .rules import (
    RULES_REVISION,
    Action,
    GameResult,
    GameState,
    IllegalActionError,
    Rules,
    new_game,
)

FORMAT = "taki-replay"
#: Version 2 adds ``rules_revision``; a version 1 replay was played by revision 1.
VERSION = 2


class ReplayError(Exception):
    """A replay file that cannot be read, or that does not re-play to its result."""


def result_to_wire(result: GameResult) -> dict[str, Any]:
    return {
        "places": list(result.places),
        "points": list(result.points),
        "winner": result.winner,
        "reason": result.reason,
        "forfeits": [
            {"seat": f.seat, "reason": f.reason, "detail": f.detail} for f in result.forfeits
        ],
        "actions": result.actions,
        "stages": None if result.stages is None else list(result.stages),
    }


@attrs.define
class Replay:
    """The record of one game, built while it is played."""

    game_id: str
    seed: int
    rules: Rules
    bots: list[str]
    first_seat: int = 0
    log: list[dict[str, Any]] = attrs.field(factory=list)
    result: dict[str, Any] | None = None

    @property
    def players(self) -> int:
        return len(self.bots)

    def new_game(self) -> GameState:
        return new_game(self.players, self.seed, self.rules, first_seat=self.first_seat)

    def record_action(self, seat: int, action: Action, last_card: bool) -> None:
        self.log.append({"seat": seat, "action": action.to_wire(), "last_card": last_card})

    def record_forfeit(self, seat: int, reason: str, detail: str) -> None:
        self.log.append({"forfeit": seat, "reason": reason, "detail": detail})

    def finish(self, result: GameResult) -> None:
        self.result = result_to_wire(result)

    def to_wire(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "rules_revision": RULES_REVISION,
            "game_id": self.game_id,
            "seed": self.seed,
            "rules": self.rules.to_wire(),
            "bots": list(self.bots),
            "first_seat": self.first_seat,
            "log": self.log,
            "result": self.result,
        }

    @classmethod
    def from_wire(cls, data: Any) -> Replay:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ReplayError("not a taki replay (missing \"format\": \"taki-replay\")")
        version = data.get("version")
        if version not in (1, VERSION):
            raise ReplayError(f"unsupported replay version {version!r}")
        revision = data.get("rules_revision", 1 if version == 1 else None)
        if revision != RULES_REVISION:
            raise ReplayError(
                f"the replay was played under rules revision {revision!r}, and this referee"
                f" plays revision {RULES_REVISION} (RULES.md, \"Revisions\"): the same"
                " actions may play out differently, so it cannot be re-played here"
            )
        try:
            return cls(
                game_id=str(data["game_id"]),
                seed=int(data["seed"]),
                rules=Rules.from_wire(data["rules"]),
                bots=[str(b) for b in data["bots"]],
                first_seat=int(data.get("first_seat", 0)),
                log=list(data["log"]),
                result=data.get("result"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReplayError(f"malformed replay: {exc!r}") from None

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_wire(), separators=(",", ":")))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> Replay:
        try:
            data = json.loads(Path(path).read_text())
        except OSError as exc:
            raise ReplayError(f"cannot read {path}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path} is not JSON: line {exc.lineno}: {exc.msg}") from None
        return cls.from_wire(data)


def apply_entry(state: GameState, index: int, entry: dict[str, Any]) -> None:
    """Apply log entry number ``index`` (an action or a forfeit) to ``state``; raises
    ReplayError when it does not apply."""
    try:
        if "forfeit" in entry:
            state.forfeit(int(entry["forfeit"]), str(entry["reason"]), str(entry["detail"]))
        else:
            action = Action.from_wire(entry["action"])
            state.apply(action, int(entry["seat"]), last_card=bool(entry["last_card"]))
    except (IllegalActionError, ValueError, KeyError, TypeError) as exc:
        raise ReplayError(f"log entry {index} does not apply: {exc}") from None


def replay_states(replay: Replay) -> GameState:
    """Re-simulate the whole log; raises ReplayError at the first entry that does not
    apply. Returns the final state."""
    state = replay.new_game()
    for index, entry in enumerate(replay.log):
        apply_entry(state, index, entry)
    return state


def verify(replay: Replay) -> GameResult:
    """Check that the replay re-plays to its recorded result; returns the result."""
    state = replay_states(replay)
    result = state.result()
    if replay.result is None:
        raise ReplayError("the replay has no result")
    recomputed = result_to_wire(result)
    if recomputed != replay.result:
        diff = {
            key: (replay.result.get(key), value)
            for key, value in recomputed.items()
            if replay.result.get(key) != value
        }
        raise ReplayError(f"the replay does not reach its recorded result: {diff}")
    return result
