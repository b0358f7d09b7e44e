"""Asked, the match of a request against what a scenario must send, and the house's moves."""

from __future__ import annotations

from referee.compliance.scenario import Asked, house_action
from referee.rules import actions as A
from referee.rules import cards as C
from referee.rules.position import position

BREAK_OR_PASS = [{"kind": "break"}, {"kind": "pass"}]


def test_asked_matches_type_phase_and_kinds() -> None:
    asked = Asked("react", "react", ("break", "pass"), exactly=True)
    assert asked.matches("react", {"phase": "react"}, BREAK_OR_PASS)
    assert not asked.matches("react", {"phase": "react"}, [{"kind": "pass"}])
    assert not asked.matches("decide", {"phase": "react"}, BREAK_OR_PASS)
    assert not asked.matches("react", {"phase": "play"}, BREAK_OR_PASS)
    assert Asked("react", "react", ("pass",)).matches("react", {"phase": "react"}, BREAK_OR_PASS)
    assert asked.describe() == "a react in phase 'react' exactly break, pass"


def test_house_plays_its_script_then_its_first_legal_action() -> None:
    game = position([["+3", "red:5"], ["+3_breaker", "blue:1"], ["green:1"]], "red:3")
    script = [A.play(C.parse("red:5"))]
    assert house_action(game, 0, script) == A.play(C.parse("red:5")) and script == []
    assert house_action(game, 0, script) == game.legal_actions(0)[0]


def test_house_passes_a_breaker_window_unless_its_script_breaks() -> None:
    game = position([["+3", "red:5"], ["+3_breaker", "blue:1"], ["green:1"]], "red:3")
    game.apply(A.play(C.PLUS_THREE))
    assert house_action(game, 1, []) == A.PASS_ACTION
    script = [A.BREAK_ACTION]
    assert house_action(game, 1, script) == A.BREAK_ACTION and script == []
    # A scripted move that is not legal now waits: seat 2 holds no Breaker.
    script = [A.BREAK_ACTION]
    assert house_action(game, 2, script) == A.PASS_ACTION and script == [A.BREAK_ACTION]
