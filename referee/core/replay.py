"""Replays: everything needed to re-play a game, and the check that it re-plays.

A replay is a JSON document: the seed, the rule set, the seats, every action and forfeit
in the order the referee applied them, and the result. ``verify`` re-simulates it with
the pure rules core and checks that it reaches the same result.
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeGuard

import attrs
from taki_protocol import MAX_PLAYERS, MIN_PLAYERS

from referee.core.errors import UserError
from referee.core.files import write_atomically
from referee.rules import (
    PRESETS,
    RULES_REVISION,
    Action,
    GameResult,
    GameState,
    Rules,
    RulesError,
    new_game,
)

FORMAT = "taki-replay"
#: Version 2 adds ``rules_revision`` (a version 1 replay was played by revision 1);
#: version 3 the answer time ``ms`` of the actions a bot chose.
VERSION = 3


class ReplayError(UserError):
    """A replay file that cannot be read, or that does not re-play to its result."""


#: The keys of a replay document.
KEYS = (
    "format", "version", "rules_revision", "game_id", "seed", "master_seed", "rules", "bots",
    "first_seat", "log", "result",
)
#: Seeds are below this (the referee derives 63-bit seeds: ``referee.core.schedule``).
SEED_LIMIT = 2**64

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 60


def _shown(value: object) -> str:
    """``value`` for a message, cut short when it is long."""
    try:
        return _SHORT.repr(value)
    except ValueError:  # an integer too long to print
        return f"an {type(value).__name__} too long to print"


def _malformed(problem: str) -> ReplayError:
    return ReplayError(f"malformed replay: {problem}")


def _wrong(field: str, wanted: str, value: object) -> ReplayError:
    return _malformed(f"{field} must be {wanted}, not {_shown(value)}")


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_seat(value: object, players: int) -> bool:
    return _is_int(value) and 0 <= value < players


def _per_seat(players: int, low: int, high: int | None = None) -> Callable[[object], bool]:
    """Whether a value is a list of one integer from ``low`` to ``high`` per seat."""
    def check(value: object) -> bool:
        return isinstance(value, list) and len(value) == players and all(
            _is_int(v) and low <= v and (high is None or v <= high) for v in value
        )
    return check


#: What one field must be: a test of the value and the words for what it must be.
Check = tuple[Callable[[object], bool], str]


def _check_object(value: object, checks: Mapping[str, Check], field: str) -> dict[str, Any]:
    """``value``, which must be an object with exactly the keys of ``checks``, each
    passing its test; raises ReplayError naming the first field that does not."""
    if not isinstance(value, dict):
        raise _wrong(field, "an object", value)
    for key in value:
        if key not in checks:
            raise _malformed(f"{field} has an unknown key {_shown(key)}")
    for key, (ok, wanted) in checks.items():
        if key not in value:
            raise _malformed(f"{field}.{key} is missing")
        if not ok(value[key]):
            raise _wrong(f"{field}.{key}", wanted, value[key])
    return value


def _check_fields(value: object, defaults: Any, field: str) -> None:
    """``value`` must be an object holding some fields of the attrs instance ``defaults``,
    each of the type of its default (the ranges are the attrs validators' business)."""
    if not isinstance(value, dict):
        raise _wrong(field, "an object", value)
    fields = attrs.fields_dict(type(defaults))
    for key, item in value.items():
        if key not in fields:
            raise _malformed(f"{field} has an unknown key {_shown(key)}")
        default = getattr(defaults, key)
        if attrs.has(type(default)):
            _check_fields(item, default, f"{field}.{key}")
        elif isinstance(default, bool) and not isinstance(item, bool):
            raise _wrong(f"{field}.{key}", "true or false", item)
        elif _is_int(default) and not _is_int(item):
            raise _wrong(f"{field}.{key}", "an integer", item)
        elif isinstance(default, str) and not isinstance(item, str):
            raise _wrong(f"{field}.{key}", "a string", item)


def rules_from_wire(data: object) -> Rules:
    """The rule set of a replay: one of the presets (``name``) with the flags it sets;
    raises ReplayError naming the field that is wrong."""
    _check_fields(data, Rules(), "rules")
    assert isinstance(data, dict)
    name = data.get("name", Rules().name)
    if name not in PRESETS:
        raise _wrong("rules.name", f"a rules preset ({', '.join(PRESETS)})", name)
    deck = Rules.preset(name).deck
    if data.get("deck", deck) != deck:
        raise _wrong("rules.deck", f"{deck!r}, the deck of {name}", data["deck"])
    try:
        return Rules.from_wire(data)
    except (TypeError, ValueError) as exc:
        raise _malformed(f"rules: {exc}") from None


def _result_checks(players: int) -> dict[str, Check]:
    seat = f"a seat from 0 to {players - 1}"
    forfeit = {
        "seat": ((lambda v: _is_seat(v, players)), seat),
        "reason": ((lambda v: isinstance(v, str)), "a string"),
        "detail": ((lambda v: isinstance(v, str)), "a string"),
    }

    def forfeits(value: object) -> bool:
        if not isinstance(value, list):
            return False
        for index, item in enumerate(value):
            _check_object(item, forfeit, f"result.forfeits[{index}]")
        return True

    counts = _per_seat(players, 0)
    return {
        "places": (_per_seat(players, 1, players), f"{players} places from 1 to {players}"),
        "points": (counts, f"{players} integers from 0"),
        "winner": ((lambda v: v is None or _is_seat(v, players)), f"null or {seat}"),
        "reason": ((lambda v: v is None or isinstance(v, str)), "null or a string"),
        "forfeits": (forfeits, "a list"),
        "actions": ((lambda v: _is_int(v) and v >= 0), "an integer from 0"),
        "stages": ((lambda v: v is None or counts(v)), f"null or {players} integers from 0"),
    }


def check_entry(index: int, entry: object, players: int) -> Action | None:
    """What log entry ``index`` of a ``players``-seat game does: its action, or None for
    a forfeit. Raises ReplayError naming the entry and its field when it is malformed
    (whether it applies is for the rules to say)."""
    field = f"log[{index}]"
    seat = ((lambda v: _is_seat(v, players)), f"a seat from 0 to {players - 1}")
    text = ((lambda v: isinstance(v, str)), "a string")
    if isinstance(entry, dict) and "forfeit" in entry:
        _check_object(entry, {"forfeit": seat, "reason": text, "detail": text}, field)
        return None
    checks = {
        "seat": seat,
        "action": ((lambda v: isinstance(v, dict)), "an object"),
        "last_card": ((lambda v: isinstance(v, bool)), "true or false"),
    }
    if isinstance(entry, dict) and "ms" in entry:  # the bot's answer time, when it chose
        checks["ms"] = (
            (lambda v: (_is_int(v) or isinstance(v, float)) and 0 <= v < SEED_LIMIT),
            "a number of milliseconds from 0",
        )
    wire = _check_object(entry, checks, field)["action"]
    try:
        action = Action.from_wire(wire)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _malformed(f"{field}.action: {exc}") from None
    if action.to_wire() != wire:
        raise _wrong(f"{field}.action", f"written {_shown(action.to_wire())}", wire)
    return action


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


def _check_header(data: Any) -> None:
    """A replay's format, version and rules revision, or ReplayError."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReplayError("not a taki replay (missing \"format\": \"taki-replay\")")
    version = data.get("version")
    if version not in (1, 2, VERSION):
        raise ReplayError(f"unsupported replay version {version!r}")
    revision = data.get("rules_revision", 1 if version == 1 else None)
    if revision != RULES_REVISION:
        raise ReplayError(
            f"the replay was played under rules revision {revision!r}, and this referee"
            f" plays revision {RULES_REVISION} (RULES.md, \"Revisions\"): the same"
            " actions may play out differently, so it cannot be re-played here"
        )


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
    #: The master seed of the run the game belongs to (``seed`` derives from it), when
    #: the referee knew it: with it, the whole run can be repeated (``--seed``).
    master_seed: int | None = None

    @property
    def players(self) -> int:
        return len(self.bots)

    def new_game(self) -> GameState:
        """The dealt game; raises ReplayError when the rules cannot deal it."""
        try:
            return new_game(self.players, self.seed, self.rules, first_seat=self.first_seat)
        except (RulesError, ValueError) as exc:
            raise ReplayError(f"the game cannot be dealt: {exc}") from None

    def record_action(
        self, seat: int, action: Action, last_card: bool, ms: float | None = None
    ) -> None:
        """Log an applied action; ``ms``: how long the bot took to choose it (None when
        the referee chose it for the bot)."""
        entry: dict[str, Any] = {"seat": seat, "action": action.to_wire(), "last_card": last_card}
        if ms is not None:
            entry["ms"] = round(ms, 1)
        self.log.append(entry)

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
            "master_seed": self.master_seed,
            "rules": self.rules.to_wire(),
            "bots": list(self.bots),
            "first_seat": self.first_seat,
            "log": self.log,
            "result": self.result,
        }

    @classmethod
    def from_wire(cls, data: Any) -> Replay:
        """The replay in ``data`` (a decoded JSON document). Raises ReplayError naming the
        first field that is missing, of the wrong type or out of range."""
        _check_header(data)
        for key in data:
            if key not in KEYS:
                raise _malformed(f"unknown key {_shown(key)}")
        for key in ("game_id", "seed", "rules", "bots", "log"):
            if key not in data:
                raise _malformed(f"{key} is missing")
        game_id, seed, bots, log = data["game_id"], data["seed"], data["bots"], data["log"]
        if not isinstance(game_id, str):
            raise _wrong("game_id", "a string", game_id)
        if not (_is_int(seed) and 0 <= seed < SEED_LIMIT):
            raise _wrong("seed", "an integer from 0 to 2**64 - 1", seed)
        rules = rules_from_wire(data["rules"])
        if not (
            isinstance(bots, list)
            and MIN_PLAYERS <= len(bots) <= MAX_PLAYERS
            and all(isinstance(b, str) for b in bots)
        ):
            raise _wrong("bots", f"a list of {MIN_PLAYERS} to {MAX_PLAYERS} names", bots)
        master_seed = data.get("master_seed")
        if not (master_seed is None or _is_int(master_seed)):
            raise _wrong("master_seed", "null or an integer", master_seed)
        first_seat = data.get("first_seat", 0)
        if not _is_seat(first_seat, len(bots)):
            raise _wrong("first_seat", f"a seat from 0 to {len(bots) - 1}", first_seat)
        if not isinstance(log, list):
            raise _wrong("log", "a list", log)
        for index, entry in enumerate(log):
            check_entry(index, entry, len(bots))
        result = data.get("result")
        if result is not None:
            _check_object(result, _result_checks(len(bots)), "result")
        return cls(game_id, seed, rules, list(bots), first_seat, list(log), result, master_seed)

    def save(self, path: Path) -> None:
        """Write the replay to ``path`` in one piece (:func:`write_atomically`), readable
        by the referee's user alone (it names the deal's seed); raises
        :class:`~referee.core.files.FileWriteError` when it cannot."""
        text = json.dumps(self.to_wire(), separators=(",", ":"))
        write_atomically(path, text, what="replay", make_parents=True, private=True)

    @classmethod
    def load(cls, path: Path) -> Replay:
        """Read and check the replay file ``path``; raises ReplayError, whatever the file
        holds, when it is not a well-formed replay."""
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ReplayError(
                f"{path} is not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start})"
            ) from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path} is not JSON: line {exc.lineno}: {exc.msg}") from None
        except RecursionError:
            raise ReplayError(f"{path} is not a replay: its JSON is nested too deeply") from None
        except ValueError as exc:  # an integer of more digits than Python converts
            raise ReplayError(f"{path} is not a replay: {exc}") from None
        return cls.from_wire(data)


def apply_entry(state: GameState, index: int, entry: dict[str, Any]) -> None:
    """Apply log entry number ``index`` (an action or a forfeit) to ``state``; raises
    ReplayError when it is malformed or does not apply (an illegal action, a seat that
    already left, anything after the end of the game)."""
    action = check_entry(index, entry, state.players)
    try:
        if action is None:
            state.forfeit(entry["forfeit"], entry["reason"], entry["detail"])
        else:
            state.apply(action, entry["seat"], last_card=entry["last_card"])
    except (RulesError, ValueError) as exc:
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
