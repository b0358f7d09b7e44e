"""Ruling R21: every game ends, after ``action_limit`` applied decisions.

What counts (RULES.md, R21): every decision the engine applies, one per call of
``apply``: a card, a draw, ending or leaving a run, ending a King's turn, and each answer
in a +3 Breaker window (every asked seat answers, so a window of N seats counts N).
Forfeits are not decisions and do not count.

The tests on positions run once per color (the ``palette`` fixture).
"""

from __future__ import annotations

import pytest
from palette import hand, play, position

from referee.rules import Rules, new_game
from referee.rules import actions as A


def test_r21_action_limit_ends_the_game_without_winner():
    game = new_game(3, 1, Rules(action_limit=5))
    while not game.is_over:
        for seat in game.to_act():
            game.apply(game.legal_actions(seat)[-1], seat)
    assert game.action_count == 5 and game.winner is None
    assert game.result().reason == "limit"


@pytest.mark.usefixtures("palette")
def test_r21_each_answer_in_a_breaker_window_counts_and_forfeits_do_not():
    game = position(hands=[["+3", "red:5", "red:6"], ["blue:1", "blue:4"],
                           ["green:1", "green:4"], ["yellow:1", "yellow:4"]], lead="red:3")
    game.apply(play("+3"))
    assert game.action_count == 1
    game.apply(A.PASS_ACTION, 1)
    game.apply(A.PASS_ACTION, 3)
    assert game.action_count == 3
    game.forfeit(2, "timeout")  # a seat that does not answer leaves; nothing is counted
    assert game.action_count == 3
    game.apply(game.legal_actions(1)[0], 1)  # the window closed; seat 1 plays on
    assert game.action_count == 4


@pytest.mark.usefixtures("palette")
def test_r21_limit_reached_inside_an_open_window_stops_the_game_there():
    # The +3 and seat 1's break are actions 1 and 2: the game stops with the window
    # still open. The break is never carried out: nobody draws, seat 1 keeps its
    # Breaker, and the ranking counts the hands as they are.
    game = position(hands=[["+3", "red:5"], ["+3_breaker", "blue:1"], ["green:1", "green:4"]],
                    lead="red:3", rules=Rules(action_limit=2))
    game.apply(play("+3"), last_card=True)
    game.apply(A.BREAK_ACTION, 1)
    assert game.is_over and game.end_reason == "limit" and game.winner is None
    assert game.to_act() == ()
    assert ("break", 1) not in game.events
    assert not any(e[0] == "draw" for e in game.events)
    assert hand(game, 1) == ["blue:1", "+3_breaker"] and game.sizes == [1, 2, 2]
    assert game.result().points == (5, 21, 5)


@pytest.mark.usefixtures("palette")
def test_r21_the_answer_that_reaches_the_limit_closes_its_window_first():
    # The last answer of a window is action 3: the window is resolved (every other
    # player draws 3), then the game stops.
    game = position(hands=[["+3", "red:5"], ["blue:1", "blue:4"], ["green:1", "green:4"]],
                    lead="red:3", rules=Rules(action_limit=3))
    game.apply(play("+3"), last_card=True)
    game.apply(A.PASS_ACTION, 2)
    game.apply(A.PASS_ACTION, 1)
    assert game.is_over and game.end_reason == "limit"
    assert game.sizes == [1, 5, 5]
