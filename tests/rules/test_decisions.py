"""The project's decisions D1-D20 (RULES.md), for cases no ruling settles.
Each test runs once per color (the ``palette`` fixture, tests/rules/palette.py): the
cards it names as red are played as red, green, blue and yellow in turn.
"""

from __future__ import annotations

import pytest
from palette import P, hand, kinds, play, position

from referee.rules import Rules, cards, view
from referee.rules import actions as A
from referee.rules.phases import AGAIN, OVER, PLAY, RUN

pytestmark = pytest.mark.usefixtures("palette")


# ---------------------------------------------------------------- decisions


def test_d01_breaker_left_with_one_card_must_declare():
    game = position(hands=[["+3", "red:5"], ["+3_breaker", "blue:1"]], lead="red:3")
    game.apply(play("+3"), last_card=True)
    game.apply(A.BREAK_ACTION, 1)
    assert game.sizes[1] == 1 + 4
    assert any(e[:4] == ("draw", 1, 4, "last_card") for e in game.events)
    game = position(hands=[["+3", "red:5"], ["+3_breaker", "blue:1"]], lead="red:3")
    game.apply(play("+3"), last_card=True)
    game.apply(A.BREAK_ACTION, 1, last_card=True)
    assert game.sizes[1] == 1


def test_d03_plus_again_cannot_continue_an_open_run():
    game = position(hands=[["red:plus", "red:5", "red:6"], ["blue:1"]], lead="red:3",
                    open_run="red")
    game.apply(play("red:plus"))  # continues the open run: a run of one Plus
    assert game.phase == RUN
    game.apply(A.LEAVE_RUN_OPEN_ACTION)
    assert game.phase == AGAIN
    game.apply(play("red:5"))
    assert game.phase == PLAY and game.turn == 1 and game.open_run == P.RED


def test_d04_hand_emptied_in_a_run_wins_and_plus_still_plays_again():
    game = position(hands=[["red:taki", "red:5"], ["blue:1"]], lead="red:3")
    game.apply(play("red:taki"))
    game.apply(play("red:5"))
    assert game.is_over and game.winner == 0
    game = position(hands=[["red:taki", "red:plus"], ["blue:1"]], lead="red:3")
    game.apply(play("red:taki"))
    game.apply(play("red:plus"), last_card=True)
    assert game.phase == RUN and not game.is_over
    game.apply(A.CLOSE_RUN_ACTION)
    assert game.phase == AGAIN and kinds(game.legal_actions()) == {"draw 1"}


def test_d04_pyramid_hand_emptied_in_a_run_ends_it_closed():
    game = position(hands=[["red:taki", "red:stop"], ["blue:1"], ["green:1"]], lead="red:3",
                    rules=Rules(pyramid=True))
    game.stages = [6, 8, 8]
    game.apply(play("red:taki"))
    game.apply(play("red:stop"))
    assert game.open_run == cards.NO_COLOR and game.sizes[0] == 5 and game.turn == 2


def test_d05_own_turn_breaker_as_last_card_wins():
    game = position(hands=[["+3_breaker"], ["blue:1"]], lead="red:3")
    game.apply(play("+3_breaker"))
    assert game.is_over and game.winner == 0


def test_d06_pyramid_ranks_by_stage_then_points():
    game = position(hands=[["red:5"], ["blue:9"], ["green:1"]], lead="red:3",
                    rules=Rules(pyramid=True))
    game.stages = [1, 3, 2]
    game.apply(play("red:5"))
    assert game.result().places == (1, 3, 2)


def test_d07_crazy_card_passes_hands():
    rules = Rules(crazy_card=True)
    assert len(rules.deck_cards()) == 118
    game = position(hands=[["crazy", "red:5"], ["blue:1", "blue:4"], ["green:1"]],
                    lead="red:3", rules=rules)
    plays = [a for a in game.legal_actions() if a.card == cards.CRAZY]
    assert [a.to_wire() for a in plays] == [{"kind": "play", "card": "crazy"}]
    game.apply(plays[0], last_card=True)
    # Every hand moves one seat on in the current direction, which stays as it was.
    assert game.direction == 1
    assert hand(game, 1) == ["red:5"] and hand(game, 2) == ["blue:1", "blue:4"]
    assert hand(game, 0) == ["green:1"]
    # Transparent: the Leading Card and the color are those under the Crazy Card.
    assert game.lead == P.parse("red:3") and game.color == P.RED
    assert game.turn == 1


def test_d07_crazy_card_follows_the_direction_of_play():
    game = position(hands=[["red:5"], ["crazy", "blue:1", "blue:4"], ["green:1", "green:3"]],
                    lead="red:3", rules=Rules(crazy_card=True), turn=1, direction=-1)
    game.apply(A.play(cards.CRAZY))
    assert hand(game, 0) == ["blue:1", "blue:4"] and hand(game, 2) == ["red:5"]
    assert hand(game, 1) == ["green:1", "green:3"]
    assert game.direction == -1 and game.turn == 0


def test_d08_old_plus3_rule_combo():
    rules = Rules(plus3_rule=True, deck="super-taki-classic")
    game = position(hands=[["red:3", "red:plus", "blue:9"], ["blue:1"], ["green:1"]],
                    lead="red:7", rules=rules)
    combo = A.combo(P.RED)
    assert combo in game.legal_actions()
    game.apply(combo, last_card=True)
    assert game.sizes == [1, 4, 4] and game.turn == 1
    assert game.lead == P.parse("red:plus")


def test_d17_a_combo_of_the_last_two_cards_wins():
    # The combination is one action with the effect of a +3 and no play-again (D8), so
    # R7's reason for keeping a Plus from finishing a hand does not arise: it wins.
    rules = Rules(plus3_rule=True, deck="super-taki-classic")
    game = position(hands=[["red:3", "red:plus"], ["blue:1"], ["green:1"]],
                    lead="red:7", rules=rules)
    game.apply(A.combo(P.RED), last_card=True)
    assert game.is_over and game.winner == 0 and game.end_reason == "win"
    assert game.sizes == [0, 1, 1]  # nobody drew: the game ended with the combination


def test_d17_the_plus_alone_as_last_card_still_plays_again_with_the_flag():
    rules = Rules(plus3_rule=True, deck="super-taki-classic")
    game = position(hands=[["red:plus"], ["blue:1"]], lead="red:7", rules=rules)
    game.apply(play("red:plus"), last_card=True)
    assert not game.is_over and game.phase == AGAIN
    assert kinds(game.legal_actions()) == {"draw 1"}


def test_d09_no_counter_break():
    game = position(hands=[["+3", "+3_breaker", "red:5"], ["+3_breaker", "blue:1"]],
                    lead="red:3")
    game.apply(play("+3"))
    assert game.to_act() == (1,)
    game.apply(A.BREAK_ACTION, 1, last_card=True)
    assert game.phase == PLAY and game.sizes[0] == 5


def test_d11_reshuffled_cards_go_under_the_draw_pile():
    game = position(hands=[["blue:9", "blue:4"], ["green:1"]], lead="red:+2", pending=4,
                    draw_pile=["yellow:1", "yellow:4"], draw_pile_size=2)
    game.apply(A.draw(4))
    drawn = game.events[-1][4]
    assert set(drawn[-2:]) == {P.parse("yellow:1"), P.parse("yellow:4")}


def test_d12_view_shows_sorted_hand_and_only_counts_for_others():
    game = position(hands=[["red:5", "blue:9"], ["green:1", "green:4"]], lead="red:3",
                    draw_pile=["yellow:9"])
    game.apply(play("red:5"), last_card=True)
    game.apply(A.draw(1), 1)
    mine = view(game, 1)
    theirs = view(game, 0)
    # Sorted in display order (card code order) in whatever colors the cards have.
    held = (P.tint(name) for name in ("green:1", "green:4", "yellow:9"))
    assert mine["hand"] == sorted(held, key=cards.parse)
    draw_mine = next(e for e in mine["events"] if e["type"] == "draw")
    draw_theirs = next(e for e in theirs["events"] if e["type"] == "draw")
    assert draw_mine["cards"] == [P.tint("yellow:9")] and "cards" not in draw_theirs
    assert theirs["hand_sizes"] == [1, 3]


def test_d13_last_one_standing_wins():
    game = position(hands=[["red:5", "red:6"], ["blue:1", "blue:4"], ["green:1", "green:4"]],
                    lead="red:3")
    game.forfeit(0, "crash")
    game.forfeit(2, "protocol")
    assert game.is_over and game.winner == 1 and game.phase == OVER


def test_d14_king_free_action_has_no_draw():
    game = position(hands=[["king", "blue:9"], ["red:1"]], lead="red:3")
    game.apply(play("king"))
    assert not any(a.kind == A.DRAW for a in game.legal_actions())


def test_d06_a_breaker_reaching_stage_one_needs_a_declaration():
    rules = Rules(pyramid=True)
    for declared, size in ((False, 1 + 4), (True, 1)):
        game = position(hands=[["+3", "red:5"], ["+3_breaker"], ["green:1", "green:4"]],
                        lead="red:3", rules=rules)
        game.stages = [8, 2, 8]
        game.apply(play("+3"), last_card=True)
        game.apply(A.BREAK_ACTION, 1, last_card=declared)
        game.apply(A.PASS_ACTION, 2)
        assert game.stages[1] == 1 and game.sizes[1] == size


def test_d06_reaching_stage_one_needs_a_declaration():
    rules = Rules(pyramid=True)
    game = position(hands=[["red:5"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
    game.stages = [2, 8]
    game.apply(play("red:5"))
    assert game.stages[0] == 1 and game.sizes[0] == 1 + 4  # undeclared: the penalty
    game = position(hands=[["red:5"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
    game.stages = [2, 8]
    game.apply(play("red:5"), last_card=True)
    assert game.sizes[0] == 1


def test_d15_plus3_player_gone_before_the_window_closes():
    # No break: the +3 still makes every other player draw 3.
    game = position(hands=[["+3", "red:5"], ["blue:1", "blue:4"], ["green:1", "green:4"],
                           ["yellow:1", "yellow:4"]], lead="red:3")
    game.apply(play("+3"), last_card=True)
    game.forfeit(0, "crash")
    game.apply(A.PASS_ACTION, 1)
    game.apply(A.PASS_ACTION, 2)
    game.apply(A.PASS_ACTION, 3)
    assert game.sizes == [0, 5, 5, 5] and game.turn == 1
    # A break: the breaker spends its card and nobody draws; a chain the +3 was part
    # of ends there, since its player would have drawn it.
    game = position(hands=[["red:5", "red:6"], ["+3", "blue:1", "blue:4"],
                           ["+3_breaker", "green:1", "green:4"]],
                    lead="red:+2", pending=2, turn=1)
    game.apply(play("+3"))
    assert game.pending == 4
    game.forfeit(1, "crash")
    game.apply(A.PASS_ACTION, 0)
    game.apply(A.BREAK_ACTION, 2)
    assert game.pending == 0 and game.sizes == [2, 0, 2]
    assert game.turn == 2 and game.card_count() == 116


def test_d16_a_two_player_stop_ends_the_turn_before_the_next_one():
    # With two players a Stop gives its player a new turn; the old one ends first, so
    # "last card" is checked then.
    game = position(hands=[["red:stop", "red:5"], ["red:1", "red:6"]], lead="red:3")
    game.apply(play("red:stop"))
    assert game.turn == 0 and game.sizes[0] == 1 + 4
    assert any(e[:4] == ("draw", 0, 4, "last_card") for e in game.events)


@pytest.mark.parametrize("hand_size", [3, 8, 12])
def test_d18_a_pyramid_starts_at_the_stage_of_the_hand_size(hand_size):
    from referee.rules import new_game

    game = new_game(4, 18, Rules(pyramid=True, hand_size=hand_size))
    assert game.stages == [hand_size] * 4
    assert game.sizes == [hand_size] * 4


def test_d18_a_small_pyramid_goes_down_one_stage_at_a_time():
    game = position(hands=[["red:5"], ["blue:1", "blue:4"]], lead="red:3",
                    rules=Rules(pyramid=True, hand_size=3))
    game.stages = [3, 3]
    game.apply(play("red:5"), last_card=True)
    assert game.stages == [2, 3] and game.sizes[0] == 2


def test_d19_a_crazy_card_as_the_last_card_wins_a_single_game():
    game = position(hands=[["crazy"], ["blue:1", "blue:4"], ["green:1"]], lead="red:3",
                    rules=Rules(crazy_card=True))
    game.apply(play("crazy"))
    assert game.is_over and game.winner == 0
    assert game.sizes == [0, 2, 1]  # no hand was passed


def test_d19_a_crazy_card_as_the_last_card_in_the_pyramid_passes_the_new_stage_on():
    # Stage 3 -> 2: the two cards of stage 2 are dealt, then every hand moves on, those
    # two cards included, and the player ends the turn with the hand of the seat before.
    game = position(hands=[["crazy"], ["blue:1", "blue:4", "blue:5"], ["green:1"]],
                    lead="red:3", rules=Rules(crazy_card=True, pyramid=True))
    game.stages = [3, 8, 8]
    game.apply(play("crazy"), last_card=True)
    assert game.stages == [2, 8, 8]
    assert game.sizes == [1, 2, 3]
    assert hand(game, 0) == ["green:1"]
    assert any(e[0] == "hands_passed" for e in game.events)
    assert not any(e[0] == "draw" and e[3] == "last_card" for e in game.events)


def test_d07_a_crazy_card_skips_a_forfeited_seat():
    hands = [["crazy", "blue:1"], ["blue:4", "blue:5", "blue:6"], ["green:1"],
             ["green:3", "green:4"]]
    game = position(hands=hands, lead="red:3", rules=Rules(crazy_card=True))
    game.forfeit(3, "crash")
    game.apply(play("crazy"))
    # Seat 0 gets seat 2's single card (seat 3 has left the game), without declaring.
    assert game.sizes == [1 + 4, 1, 3, 0]
    assert "green:1" in hand(game, 0)
    assert any(e[:4] == ("draw", 0, 4, "last_card") for e in game.events)


def test_d06_a_king_reaching_stage_one_needs_a_declaration():
    # The King empties the hand at stage 2: no free action (R24), stage 1's card, and
    # the turn ends with it.
    rules = Rules(pyramid=True)
    for declared, size in ((False, 1 + 4), (True, 1)):
        game = position(hands=[["king"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
        game.stages = [2, 8]
        game.apply(play("king"), last_card=declared)
        assert game.stages[0] == 1 and game.sizes[0] == size
        assert game.phase == PLAY and game.turn == 1


def test_d20_own_turn_breaker_as_last_card_in_the_pyramid_passes_the_stage_then_draws():
    rules = Rules(pyramid=True)
    game = position(hands=[["+3_breaker"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
    game.stages = [2, 8]
    game.apply(play("+3_breaker"))  # no declaration: four cards are no "last card"
    assert game.stages[0] == 1 and game.sizes[0] == 1 + 3
    assert [e[3] for e in game.events if e[0] == "draw" and e[1] == 0] == ["stage", "breaker"]
    assert game.phase == PLAY and game.turn == 1 and not game.is_over
    # At stage 1 the emptied hand wins, and nothing is drawn (D5).
    game = position(hands=[["+3_breaker"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
    game.stages = [1, 8]
    game.apply(play("+3_breaker"))
    assert game.is_over and game.winner == 0 and game.sizes[0] == 0
