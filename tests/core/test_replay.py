"""Replays: saved and loaded whole, re-played by the rules core, and refused when they
belong to another rules revision, were tampered with or are malformed; ``replay verify``
and ``replay render`` report a bad file in one line and go on with the next."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.cli import replays as replays_command
from referee.cli.main import main
from referee.core.replay import VERSION, Replay, ReplayError, verify
from referee.present import render as render_module
from referee.rules import RULES_REVISION, Rules

REFEREE = Path(sys.executable).with_name("taki-referee")


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


def _with(**changes: Any) -> Callable[[dict[str, Any]], Any]:
    """A change of a replay document: top-level keys, or ``rules__KEY`` for a rule."""
    def change(data: dict[str, Any]) -> Any:
        for key, value in changes.items():
            if key.startswith("rules__"):
                data["rules"][key.removeprefix("rules__")] = value
            else:
                data[key] = value
        return data
    return change


def _log(change: Callable[[list[Any]], object]) -> Callable[[dict[str, Any]], Any]:
    def apply(data: dict[str, Any]) -> Any:
        change(data["log"])
        return data
    return apply


def _forfeit(seat: int) -> Callable[[list[dict[str, Any]]], None]:
    return lambda log: log.insert(0, {"forfeit": seat, "reason": "timeout", "detail": ""})


#: Every way a replay file can be malformed: what the file holds (bytes, or a change of
#: a good replay's document) and what the error must say.
MALFORMED: dict[str, tuple[bytes | Callable[[dict[str, Any]], Any], str]] = {
    "binary": (bytes(range(256)), r"is not UTF-8 text \(byte 0x80 at offset 128\)"),
    "latin-1": ('{"game_id": "caf\u00e9"}'.encode("latin-1"), "is not UTF-8 text"),
    "not JSON": (b'{"format": ', r"is not JSON: line 1"),
    "deep JSON": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "huge integer": (b'{"seed": ' + b"9" * 5000 + b"}", "is not a replay: .*digits"),
    "not an object": (lambda data: [data], "not a taki replay"),
    "unknown key": (_with(extra=1), "unknown key 'extra'"),
    "no log": (lambda data: {k: v for k, v in data.items() if k != "log"}, "log is missing"),
    "game_id": (_with(game_id=7), "game_id must be a string, not 7"),
    "0 bots": (_with(bots=[]), r"bots must be a list of 2 to 10 names, not \[\]"),
    "1 bot": (_with(bots=["a"]), "bots must be a list of 2 to 10 names"),
    "11 bots": (_with(bots=[f"b{i}" for i in range(11)]), "bots must be a list of 2 to 10"),
    "bots dict": (_with(bots={"a": 1, "b": 2, "c": 3}), "bots must be a list"),
    "bots string": (_with(bots="abc"), "bots must be a list of 2 to 10 names, not 'abc'"),
    "bot not a string": (_with(bots=["a", "b", 3]), "bots must be a list"),
    "first_seat 99": (_with(first_seat=99), "first_seat must be a seat from 0 to 2, not 99"),
    "first_seat -1": (_with(first_seat=-1), "first_seat must be a seat from 0 to 2, not -1"),
    "first_seat true": (_with(first_seat=True), "first_seat must be a seat"),
    "forfeit 99": (_log(_forfeit(99)), r"log\[0\].forfeit must be a seat from 0 to 2, not 99"),
    "forfeit -7": (_log(_forfeit(-7)), r"log\[0\].forfeit must be a seat from 0 to 2, not -7"),
    "forfeit twice": (_log(lambda log: [_forfeit(1)(log), _forfeit(1)(log)]),
                      "log entry 1 does not apply: seat 1 has already left the game"),
    "seat 5": (_log(lambda log: log[0].update(seat=5)), r"log\[0\].seat must be a seat"),
    "entry not an object": (_log(lambda log: log.insert(3, [1])), r"log\[3\] must be an object"),
    "entry key missing": (_log(lambda log: log[2].pop("last_card")), r"log\[2\].last_card is"),
    "last_card string": (_log(lambda log: log[1].update(last_card="yes")), "true or false"),
    "unknown action": (_log(lambda log: log[0].update(action={"kind": "fly"})),
                       r"log\[0\].action: not an action"),
    "draw count string": (_log(lambda log: log[0].update(action={"kind": "draw", "count": "1"})),
                          r"log\[0\].action must be written \{'count': 1, 'kind': 'draw'\}, not"),
    "draw count infinite": (_log(lambda log: log[0].update(action={"kind": "draw",
                                                                   "count": float("inf")})),
                            r"log\[0\].action: cannot convert float infinity"),
    "entry after the end": (_log(lambda log: log.append(log[-1])),
                            r"log entry \d+ does not apply: the game is over"),
    "result string": (_with(result="won"), "result must be an object, not 'won'"),
    "result list": (_with(result=[1, 2]), r"result must be an object, not \[1, 2\]"),
    "result places": (lambda data: data["result"].update(places=[1, 2]) or data,
                      r"result.places must be 3 places from 1 to 3, not \[1, 2\]"),
    "result forfeit": (lambda data: data["result"].update(forfeits=[{"seat": 1}]) or data,
                       r"result.forfeits\[0\].reason is missing"),
    "seed infinite": (_with(seed=float("inf")), "seed must be an integer from 0 to 2..64 - 1"),
    "seed huge float": (_with(seed=1e300), "seed must be an integer"),
    "seed huge int": (_with(seed=2**64), "seed must be an integer"),
    "seed string": (_with(seed="3"), "seed must be an integer"),
    "hand_size 1000": (_with(rules__hand_size=1000),
                       "the game cannot be dealt: hand_size 1000 is too large for 3 players"),
    "hand_size 0": (_with(rules__hand_size=0), "rules: 'hand_size' must be >= 1"),
    "rules name": (_with(rules__name="nonsense"), "rules.name must be a rules preset"),
    "rules deck": (_with(rules__deck="super-taki-classic"), "rules.deck must be"),
    "rules flag type": (_with(rules__voluntary_draw="yes"), "rules.voluntary_draw must be"),
    "rules unknown flag": (_with(rules__wild=True), "rules has an unknown key 'wild'"),
    "rules scoring": (_with(rules__scoring={"colorless": 2.5}), "rules.scoring.colorless"),
    "rules not an object": (_with(rules=[]), r"rules must be an object, not \[\]"),
}


def malformed_file(directory: Path, case: str) -> Path:
    content = MALFORMED[case][0]
    if not isinstance(content, bytes):
        content = json.dumps(content(played().to_wire())).encode()
    path = directory / f"{case.replace(' ', '-')}.json"
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_replay_is_refused_with_a_reason(case: str, tmp_path: Path) -> None:
    path = malformed_file(tmp_path, case)
    with pytest.raises(ReplayError, match=MALFORMED[case][1]):
        verify(Replay.load(path))


@pytest.mark.parametrize("case", MALFORMED)
def test_the_commands_report_a_malformed_replay_in_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = malformed_file(tmp_path, case)
    assert main(["replay", "verify", str(path)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith(f"FAIL {path}: ")
    assert re.search(MALFORMED[case][1], out)
    # The page is not written; the reason is one line of standard error, exit status 2.
    page = tmp_path / "page.html"
    assert main(["replay", "render", str(path), "-o", str(page)]) == 2
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert err.startswith(f"taki-referee: {path}: ") and re.search(MALFORMED[case][1], err)
    assert captured.out == "" and not page.exists()


def test_verify_checks_every_file_whatever_the_one_before_held(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    played().save(good)
    bad = malformed_file(tmp_path, "binary")
    deep = malformed_file(tmp_path, "deep JSON")
    done = subprocess.run(
        [str(REFEREE), "replay", "verify", str(good), str(bad), str(deep), str(good)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == lines[3] == f"ok   {good}: seat 2 wins after 55 actions"
    assert lines[1].startswith(f"FAIL {bad}: ") and "not UTF-8 text" in lines[1]
    assert lines[2].startswith(f"FAIL {deep}: ") and "nested too deeply" in lines[2]
    assert len(lines) == 4
    # Every file good: exit status 0.
    assert main(["replay", "verify", str(good), str(good)]) == 0


def test_an_unexpected_error_is_one_failure_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    good = tmp_path / "good.json"
    played().save(good)
    other = tmp_path / "other.json"
    played(seed=4).save(other)

    def broken(replay: Replay) -> Any:
        if replay.seed == 3:
            raise ZeroDivisionError("division by zero")
        return verify(replay)

    monkeypatch.setattr(replays_command, "verify", broken)
    assert main(["replay", "verify", str(good), str(other)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"FAIL {good}: unexpected ZeroDivisionError: division by zero"
    assert lines[1].startswith(f"ok   {other}: ")

    def broken_page(replay: Replay) -> str:
        raise KeyError("hands")

    monkeypatch.setattr(render_module, "render_html", broken_page)
    assert main(["replay", "render", str(good)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err == f"taki-referee: {good}: unexpected KeyError: 'hands'"
