"""Rulings R16-R19: +3, +3 Breaker and Plus.
Each test runs once per color (the ``palette`` fixture, tests/rules/palette.py): the
cards it names as red are played as red, green, blue and yellow in turn.
"""

from __future__ import annotations

import pytest
from palette import P, kinds, play, position

from referee.rules import actions as A
from referee.rules.phases import AGAIN, REACT

pytestmark = pytest.mark.usefixtures("palette")


def test_r16_plus3_every_other_player_draws_three_in_order():
    game = position(
        hands=[["+3", "red:5"], ["blue:1", "blue:4"], ["green:1", "green:4"]],
        lead="red:3",
    )
    game.apply(play("+3"), last_card=True)
    assert game.phase == REACT and set(game.to_act()) == {1, 2}
    n = len(game.events)
    game.apply(A.PASS_ACTION, 2)
    game.apply(A.PASS_ACTION, 1)
    draws = [(e[1], e[2]) for e in game.events[n:] if e[0] == "draw"]
    assert draws == [(1, 3), (2, 3)]
    assert game.lead == P.parse("red:3") and game.color == P.RED  # transparent
    assert game.turn == 1


def test_r16_plus3_on_a_chain_adds_two():
    game = position(hands=[["red:1", "red:5"], ["+3", "blue:9"], ["green:1", "green:4"]],
                    lead="red:+2", pending=2, turn=1)
    game.apply(play("+3"), last_card=True)
    for seat in game.to_act():
        game.apply(A.PASS_ACTION, seat)
    assert game.pending == 4 and game.turn == 2
    assert game.sizes == [2, 1, 2]  # nobody drew 3
    assert kinds(game.legal_actions()) == {"draw 4"}


def test_r16_plus3_not_in_a_run():
    game = position(hands=[["red:taki", "+3", "red:5"], ["blue:1"]], lead="red:3")
    game.apply(play("red:taki"))
    assert "play +3" not in kinds(game.legal_actions())


def test_r17_break_cancels_and_plus3_player_draws():
    game = position(
        hands=[["+3", "red:5", "red:6"], ["+3_breaker", "blue:4", "blue:5"],
               ["+3_breaker", "green:4", "green:5"]],
        lead="red:3",
    )
    game.apply(play("+3"))
    assert kinds(game.legal_actions(1)) == {"break", "pass"}
    game.apply(A.BREAK_ACTION, 2)
    game.apply(A.BREAK_ACTION, 1)
    # Seat 1 is first in turn order after seat 0: its break counts, seat 2 keeps its card.
    assert ("break", 1) in game.events and ("break", 2) not in game.events
    assert game.sizes == [2 + 3, 2, 3]
    assert game.turn == 1  # play goes on from the +3's player
    assert game.lead == P.parse("red:3")


@pytest.mark.parametrize(("direction", "winner"), [(1, 3), (-1, 1)])
def test_r17_first_breaker_in_turn_order_after_the_plus3(direction, winner):
    # Seat 2 plays the +3; seats 1 and 3 both break. Turn order after seat 2 is
    # 3, 0, 1 going up the seats and 1, 0, 3 going down: the first breaker wins.
    game = position(
        hands=[["red:4", "red:6"], ["+3_breaker", "blue:4", "blue:5"],
               ["+3", "red:5", "red:7"], ["+3_breaker", "green:4", "green:5"]],
        lead="red:3", turn=2, direction=direction,
    )
    game.apply(play("+3"))
    for seat in (1, 3):
        game.apply(A.BREAK_ACTION, seat)
    game.apply(A.PASS_ACTION, 0)
    loser = 4 - winner
    assert ("break", winner) in game.events and ("break", loser) not in game.events
    assert game.sizes[winner] == 2 and game.sizes[loser] == 3
    assert game.sizes[2] == 2 + 3 and game.sizes[0] == 2
    assert game.turn == (2 + direction) % 4  # play goes on from the +3's player


def test_r17_everyone_is_asked_even_without_a_breaker():
    game = position(hands=[["+3", "red:5"], ["blue:4"], ["green:4"]], lead="red:3")
    game.apply(play("+3"), last_card=True)
    assert set(game.to_act()) == {1, 2}
    assert kinds(game.legal_actions(1)) == {"pass"}


def test_r17_breaking_a_chain_plus3_makes_its_player_draw_the_total():
    game = position(hands=[["+3_breaker", "red:5", "red:9"], ["+3", "blue:9", "blue:4"]],
                    lead="red:+2", pending=4, turn=1)
    game.apply(play("+3"))
    assert game.pending == 6
    game.apply(A.BREAK_ACTION, 0)
    assert game.pending == 0 and game.sizes == [2, 2 + 6]
    assert game.turn == 0


def test_r17_breaking_with_the_last_card_wins():
    game = position(hands=[["+3", "red:5"], ["+3_breaker"]], lead="red:3")
    game.apply(play("+3"), last_card=True)
    game.apply(A.BREAK_ACTION, 1)
    assert game.is_over and game.winner == 1


def test_r18_breaker_in_own_turn_draws_three():
    game = position(hands=[["+3_breaker", "green:5"], ["blue:1"]], lead="red:3")
    assert "play +3_breaker" in kinds(game.legal_actions())
    game.apply(play("+3_breaker"))
    assert game.sizes[0] == 4 and game.turn == 1
    assert game.lead == P.parse("red:3")


def test_r18_breaker_not_on_active_chain():
    game = position(hands=[["+3_breaker", "green:5"], ["blue:1"]], lead="red:+2", pending=2)
    assert "play +3_breaker" not in kinds(game.legal_actions())


def test_r19_plus_plays_again_or_draws():
    game = position(hands=[["red:plus", "red:5", "blue:9"], ["blue:1"]], lead="red:3")
    game.apply(play("red:plus"))
    assert game.phase == AGAIN and game.turn == 0
    assert kinds(game.legal_actions()) == {"play red:5"}
    game = position(hands=[["red:plus", "blue:9"], ["blue:1"]], lead="red:3")
    game.apply(play("red:plus"))
    assert kinds(game.legal_actions()) == {"draw 1"}
    game.apply(A.draw(1))
    assert game.turn == 1
