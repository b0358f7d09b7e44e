"""Rulings R4-R7: what a turn allows, drawing, "last card", winning.
Each test runs once per color (the ``palette`` fixture, tests/rules/palette.py): the
cards it names as red are played as red, green, blue and yellow in turn.
"""

from __future__ import annotations

import pytest
from palette import hand, kinds, play, position

from referee.rules import IllegalActionError, Rules
from referee.rules import actions as A
from referee.rules.phases import AGAIN

pytestmark = pytest.mark.usefixtures("palette")


# ---------------------------------------------------------------- a turn


def test_r04_match_color_or_figure():
    game = position(
        hands=[["red:5", "blue:3", "blue:stop", "green:7", "king"], ["red:1"]],
        lead="red:3",
    )
    assert kinds(game.legal_actions()) == {"play red:5", "play blue:3", "play king"}
    game2 = position(hands=[["blue:stop", "green:7"], ["red:1"]], lead="red:stop")
    assert kinds(game2.legal_actions()) == {"play blue:stop"}


def test_r04_illegal_play_raises_and_changes_nothing():
    game = position(hands=[["green:7", "red:5"], ["red:1"]], lead="red:3")
    before = game.snapshot()
    with pytest.raises(IllegalActionError):
        game.apply(play("green:7"))
    with pytest.raises(IllegalActionError):
        game.apply(A.draw(1))  # R5: drawing with a legal card in hand
    assert game.snapshot() == before


def test_r05_draw_only_without_a_legal_play():
    game = position(hands=[["green:7", "blue:4"], ["red:1"]], lead="red:3",
                    draw_pile=["red:9"])
    assert kinds(game.legal_actions()) == {"draw 1"}
    game.apply(A.draw(1))
    assert "red:9" in hand(game, 0)
    assert game.turn == 1  # the turn ends; the drawn card waits


def test_r05_voluntary_draw_flag():
    game = position(hands=[["red:5"], ["red:1"]], lead="red:3",
                    rules=Rules(voluntary_draw=True))
    assert kinds(game.legal_actions()) == {"play red:5", "draw 1"}


def test_r06_last_card_penalty_without_declaration():
    game = position(hands=[["red:5", "red:6"], ["blue:1", "blue:4"]], lead="red:3")
    game.apply(play("red:5"))
    assert game.sizes[0] == 1 + 4
    assert game.events[-1][0] == "draw" and game.events[-1][3] == "last_card"


def test_r06_declared_last_card_costs_nothing():
    game = position(hands=[["red:5", "red:6"], ["blue:1", "blue:4"]], lead="red:3")
    game.apply(play("red:5"), last_card=True)
    assert game.sizes[0] == 1
    assert ("last_card", 0) in game.events


def test_r06_declaration_on_any_action_of_the_turn():
    # Declared on the Plus, the turn ends after the second card with one card left.
    game = position(hands=[["red:plus", "red:5", "red:6"], ["blue:1"]], lead="red:3")
    game.apply(play("red:plus"), last_card=True)
    game.apply(play("red:5"))
    assert game.sizes[0] == 1


def test_r06_penalty_size_setting_and_off():
    game = position(hands=[["red:5", "red:6"], ["blue:1"]], lead="red:3",
                    rules=Rules(last_card_penalty=2))
    game.apply(play("red:5"))
    assert game.sizes[0] == 3
    game = position(hands=[["red:5", "red:6"], ["blue:1"]], lead="red:3",
                    rules=Rules(last_card_penalty=0))
    game.apply(play("red:5"))
    assert game.sizes[0] == 1


def test_r07_emptying_the_hand_wins():
    game = position(hands=[["red:5"], ["blue:1"]], lead="red:3")
    game.apply(play("red:5"))
    assert game.is_over and game.winner == 0
    assert game.result().places == (1, 2)


def test_r07_plus_never_finishes_a_hand():
    game = position(hands=[["red:plus"], ["blue:1"]], lead="red:3", draw_pile=["green:4"])
    game.apply(play("red:plus"), last_card=True)
    assert not game.is_over and game.phase == AGAIN
    assert kinds(game.legal_actions()) == {"draw 1"}
    game.apply(A.draw(1))
    assert hand(game, 0) == ["green:4"] and game.turn == 1


def test_r07_plus_as_last_card_passes_no_pyramid_stage():
    game = position(hands=[["red:plus"], ["blue:1", "blue:4"]], lead="red:3",
                    draw_pile=["green:4"], rules=Rules(pyramid=True))
    game.apply(play("red:plus"), last_card=True)
    assert game.stages == [8, 8] and game.phase == AGAIN and game.sizes[0] == 0
    game.apply(A.draw(1))
    assert hand(game, 0) == ["green:4"] and game.stages == [8, 8] and game.turn == 1


def test_r07_king_may_be_the_last_card():
    game = position(hands=[["king"], ["blue:1"]], lead="red:3")
    game.apply(play("king"))
    assert game.is_over and game.winner == 0
