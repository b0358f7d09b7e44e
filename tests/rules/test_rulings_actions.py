"""Rulings R8-R15: Stop, Change Direction, +2, Change Color, TAKI runs, SuperTaki, King.
Each test runs once per color (the ``palette`` fixture, tests/rules/palette.py): the
cards it names as red are played as red, green, blue and yellow in turn.
"""

from __future__ import annotations

import pytest
from palette import P, change_color, kinds, play, position

from referee.rules import Rules, cards
from referee.rules import actions as A
from referee.rules.phases import KING, PLAY, RUN

pytestmark = pytest.mark.usefixtures("palette")


# ---------------------------------------------------------------- actions


def test_r08_stop_skips_the_next_player():
    game = position(hands=[["red:stop", "red:5"], ["red:1", "red:6"], ["red:7", "red:8"]],
                    lead="red:3")
    game.apply(play("red:stop"))
    assert game.turn == 2
    assert ("skip", 1) in game.events


def test_r08_stop_with_two_players_plays_again():
    game = position(hands=[["red:stop", "red:5"], ["red:1", "red:6"]], lead="red:3")
    game.apply(play("red:stop"), last_card=True)
    assert game.turn == 0


def test_r09_change_direction_reverses():
    game = position(
        hands=[["red:change_direction", "red:5"], ["red:1", "red:4"], ["red:7", "red:8"]],
        lead="red:3",
    )
    game.apply(play("red:change_direction"), last_card=True)
    assert game.direction == -1 and game.turn == 2


def test_r09_change_direction_with_two_players_changes_nothing():
    game = position(hands=[["red:change_direction", "red:5"], ["red:1", "red:4"]],
                    lead="red:3")
    game.apply(play("red:change_direction"), last_card=True)
    assert game.turn == 1


def test_r10_plus_two_chain_grows_and_is_drawn():
    game = position(
        hands=[["red:+2", "red:5"], ["blue:+2", "blue:5", "red:1"], ["green:4", "green:5"]],
        lead="red:3",
    )
    game.apply(play("red:+2"), last_card=True)
    assert game.pending == 2
    assert kinds(game.legal_actions()) == {"play blue:+2", "draw 2"}  # R10 answers
    game.apply(play("blue:+2"))
    assert game.pending == 4 and game.turn == 2
    assert kinds(game.legal_actions()) == {"draw 4"}
    game.apply(A.draw(4))
    assert game.sizes[2] == 6 and game.pending == 0 and game.turn == 0


def test_r10_drawing_the_total_is_always_legal():
    game = position(hands=[["red:1", "red:5"], ["blue:+2", "king", "+3"]], lead="red:+2",
                    pending=2, turn=1)
    assert "draw 2" in kinds(game.legal_actions())


def test_r10_after_the_draw_the_plus_two_is_ordinary():
    game = position(hands=[["blue:7", "blue:8"], ["red:1", "green:+2", "yellow:4"]],
                    lead="red:+2", pending=2)
    game.apply(A.draw(2))
    assert game.pending == 0 and game.turn == 1 and game.sizes[0] == 4
    # The next player matches the +2 by color or figure like any card; no chain is due.
    assert kinds(game.legal_actions()) == {"play red:1", "play green:+2"}
    game.apply(play("red:1"))
    assert game.pending == 0 and game.turn == 0


def test_r11_change_color_names_a_color():
    game = position(hands=[["change_color", "red:5"], ["blue:1"]], lead="red:3")
    assert {"play change_color red", "play change_color blue", "play change_color green",
            "play change_color yellow"} <= kinds(game.legal_actions())
    game.apply(change_color("blue"), last_card=True)
    assert game.color == P.BLUE and game.turn == 1
    assert kinds(game.legal_actions(1)) == {"play blue:1"}


def test_r11_change_color_illegal_on_active_chain():
    game = position(hands=[["change_color", "super_taki", "+3_breaker", "red:5"], ["blue:1"]],
                    lead="red:+2", pending=2)
    assert kinds(game.legal_actions()) == {"draw 2"}


def test_r12_taki_run_plays_many_cards_and_only_the_last_acts():
    game = position(
        hands=[["red:taki", "red:stop", "red:+2", "red:5", "blue:5"], ["green:1", "green:4"]],
        lead="red:3",
    )
    game.apply(play("red:taki"))
    assert game.phase == RUN
    assert kinds(game.legal_actions()) == {"play red:stop", "play red:+2", "play red:5",
                                           "leave_run_open"}
    game.apply(play("red:stop"))
    game.apply(play("red:+2"))
    game.apply(play("red:5"))
    game.apply(A.CLOSE_RUN_ACTION)
    # The Stop and the +2 were cancelled: no skip, no chain.
    assert game.turn == 1 and game.pending == 0
    assert game.open_run == cards.NO_COLOR


def test_r12_last_card_of_run_acts():
    game = position(hands=[["red:taki", "red:5", "red:+2", "blue:9"], ["green:1", "green:4"]],
                    lead="red:3")
    for name in ("red:taki", "red:5", "red:+2"):
        game.apply(play(name))
    game.apply(A.CLOSE_RUN_ACTION)
    assert game.pending == 2 and game.turn == 1


def test_r12_no_other_taki_and_no_plus3_in_a_run():
    game = position(
        hands=[["red:taki", "blue:taki", "+3", "+3_breaker", "super_taki", "king",
                "change_color", "red:4"], ["green:1"]],
        lead="red:3",
    )
    game.apply(play("red:taki"))
    legal = kinds(game.legal_actions())
    assert "play blue:taki" not in legal
    assert "play +3" not in legal and "play +3_breaker" not in legal
    assert {"play super_taki", "play king", "play change_color green", "play red:4"} <= legal


def test_r12_super_taki_in_a_run_takes_its_color():
    game = position(hands=[["red:taki", "super_taki", "red:4", "blue:9"], ["green:1"]],
                    lead="red:3")
    game.apply(play("red:taki"))
    game.apply(play("super_taki"))
    assert game.color == P.RED
    game.apply(play("red:4"))
    assert game.color == P.RED


def test_r12_change_color_ends_the_run_closed():
    game = position(hands=[["red:taki", "red:5", "change_color", "blue:9"], ["blue:1"]],
                    lead="red:3")
    game.apply(play("red:taki"))
    game.apply(play("red:5"))
    game.apply(change_color("green"))
    assert game.open_run == cards.NO_COLOR and game.color == P.GREEN
    assert game.turn == 1 and ("run_end", 0, True) in game.events


def test_r12_king_ends_the_run_and_gives_a_free_action():
    game = position(hands=[["red:taki", "red:5", "king", "blue:9", "green:1"], ["blue:1"]],
                    lead="red:3")
    for name in ("red:taki", "red:5", "king"):
        game.apply(play(name))
    assert game.phase == KING and game.open_run == cards.NO_COLOR
    assert {"play blue:9", "play green:1", "end_turn"} == kinds(game.legal_actions())


def test_r12_taki_ending_a_longer_run_does_nothing():
    game = position(hands=[["red:taki", "red:5", "red:taki", "blue:9"], ["green:1"]],
                    lead="red:3")
    for name in ("red:taki", "red:5", "red:taki"):
        game.apply(play(name))
    assert "close_run" in kinds(game.legal_actions())
    game.apply(A.CLOSE_RUN_ACTION)
    assert game.turn == 1 and game.open_run == cards.NO_COLOR


def test_r13_open_run_is_continued_by_the_next_player_and_closed():
    game = position(
        hands=[["red:taki", "red:5", "blue:1"], ["red:6", "red:7", "red:stop", "green:1"],
               ["yellow:1", "yellow:4"]],
        lead="red:3",
    )
    game.apply(play("red:taki"))
    game.apply(play("red:5"))
    game.apply(A.LEAVE_RUN_OPEN_ACTION)
    assert game.open_run == P.RED and game.turn == 1
    game.apply(play("red:6"))
    assert game.phase == RUN  # continuing the open run
    game.apply(play("red:stop"))
    game.apply(play("red:7"))
    game.apply(A.CLOSE_RUN_ACTION, last_card=True)
    assert game.open_run == cards.NO_COLOR and game.turn == 2  # the Stop was cancelled


def test_r13_lone_taki_is_passed_on_open_and_closed_by_the_next_player():
    game = position(hands=[["red:taki", "blue:1"], ["red:6", "red:7", "green:1"],
                           ["yellow:1", "yellow:4"]], lead="red:3")
    game.apply(play("red:taki"))
    assert kinds(game.legal_actions()) == {"leave_run_open"}  # nothing red left to add
    game.apply(A.LEAVE_RUN_OPEN_ACTION, last_card=True)
    assert game.open_run == P.RED and game.turn == 1
    game.apply(play("red:6"))
    game.apply(play("red:7"))
    assert "close_run" in kinds(game.legal_actions())
    game.apply(A.CLOSE_RUN_ACTION, last_card=True)
    assert game.open_run == cards.NO_COLOR and game.turn == 2
    assert kinds(game.legal_actions()) == {"draw 1"}  # yellow cannot follow red:7


def test_r13_lone_taki_cannot_be_closed():
    game = position(hands=[["red:taki", "blue:1"], ["red:6"]], lead="red:3")
    game.apply(play("red:taki"), last_card=True)
    assert kinds(game.legal_actions()) == {"leave_run_open"}
    game.apply(A.LEAVE_RUN_OPEN_ACTION)
    assert game.open_run == P.RED


def test_r13_another_color_closes_the_open_run():
    game = position(hands=[["red:1", "red:5"], ["blue:3", "blue:9"]], lead="red:3",
                    open_run="red", turn=1)
    game.apply(play("blue:3"))
    assert game.open_run == cards.NO_COLOR


def test_r13_king_and_change_color_close_transparent_cards_do_not():
    game = position(hands=[["red:1", "red:5"], ["king", "blue:9"]], lead="red:3",
                    open_run="red", turn=1)
    game.apply(play("king"))
    assert game.open_run == cards.NO_COLOR
    game = position(hands=[["red:1", "red:5"], ["+3", "blue:9"], ["green:1"]],
                    lead="red:3", open_run="red", turn=1)
    game.apply(play("+3"))
    for seat in game.to_act():
        game.apply(A.PASS_ACTION, seat)
    assert game.open_run == P.RED


@pytest.mark.parametrize("named", ["red", "blue"])
def test_r13_change_color_closes_the_open_run_whatever_it_names(named):
    game = position(hands=[["red:1", "red:5"], ["change_color", "blue:9"], ["red:4", "blue:4"]],
                    lead="red:3", open_run="red", turn=1)
    game.apply(change_color(named))
    assert game.open_run == cards.NO_COLOR and game.turn == 2
    # The next player plays one card as usual: no run to continue.
    game.apply(play(f"{named}:4"), last_card=True)
    assert game.phase == PLAY and game.turn == 0


def test_r13_drawing_leaves_the_run_open_and_chain_blocks_continuing():
    game = position(hands=[["red:1", "red:5"], ["blue:9", "green:4"], ["red:4", "red:6"]],
                    lead="red:3", open_run="red", turn=1)
    game.apply(A.draw(1))
    assert game.open_run == P.RED and game.turn == 2
    game.apply(play("red:4"))
    assert game.phase == RUN
    # On an active +2 chain the run cannot be continued:
    game = position(hands=[["red:1"], ["red:+2", "red:5"]], lead="red:+2", pending=2,
                    open_run="red", turn=1)
    assert kinds(game.legal_actions()) == {"play red:+2", "draw 2"}
    game.apply(play("red:+2"))
    assert game.pending == 4 and game.phase == PLAY and game.turn == 0


def test_r14_super_taki_takes_the_current_color():
    game = position(hands=[["super_taki", "blue:5", "green:5"], ["blue:1"]], lead="blue:3")
    game.apply(play("super_taki"))
    assert game.phase == RUN and game.run_color == P.BLUE and game.color == P.BLUE
    assert kinds(game.legal_actions()) == {"play blue:5", "leave_run_open"}


def test_r14_super_taki_after_king_keeps_the_color_before_the_king():
    game = position(hands=[["king", "super_taki", "yellow:5", "green:5"], ["blue:1"]],
                    lead="yellow:3")
    game.apply(play("king"))
    assert game.color == P.YELLOW
    game.apply(play("super_taki"))
    assert game.run_color == P.YELLOW
    assert kinds(game.legal_actions()) == {"play yellow:5", "leave_run_open"}


def test_r14_super_taki_illegal_on_active_chain():
    game = position(hands=[["super_taki", "red:5"], ["blue:1"]], lead="red:+2", pending=2)
    assert "play super_taki" not in kinds(game.legal_actions())


def test_r15_king_on_a_plus_two_chain_cancels_it():
    game = position(hands=[["red:1", "red:6"], ["king", "blue:9", "green:4"]],
                    lead="red:+2", pending=4, turn=1)
    assert "play king" in kinds(game.legal_actions())
    game.apply(play("king"))
    assert game.pending == 0 and game.phase == KING
    assert kinds(game.legal_actions()) == {"play blue:9", "play green:4", "end_turn"}
    game.apply(A.END_TURN_ACTION)
    assert game.turn == 0 and game.sizes[0] == 2 and game.sizes[1] == 2


def test_r15_king_free_action_any_card_and_keeps_color():
    game = position(hands=[["king", "green:9", "blue:4"], ["red:1"]], lead="red:3")
    game.apply(play("king"))
    assert game.color == P.RED
    game.apply(play("green:9"), last_card=True)
    assert game.color == P.GREEN and game.turn == 1


def test_r13_a_crazy_card_is_transparent_and_leaves_the_run_open():
    game = position(hands=[["red:1", "red:5"], ["crazy", "blue:9"], ["green:1", "green:4"]],
                    lead="red:3", open_run="red", turn=1, rules=Rules(crazy_card=True))
    game.apply(play("crazy"))
    assert game.open_run == P.RED and game.turn == 2
