"""Rulings R20 and R22-R24: the draw pile, results, forfeits and match formats.
Each test runs once per color (the ``palette`` fixture, tests/rules/palette.py): the
cards it names as red are played as red, green, blue and yellow in turn.
"""

from __future__ import annotations

from palette import P, play, position

from referee.rules import Rules, cards, view
from referee.rules import actions as A
from referee.rules.formats import Series, SeriesRules, penalty_points
from referee.rules.phases import PLAY, REACT

# ---------------------------------------------------------------- draw pile


def test_r20_reshuffle_keeps_top_and_transparent_cards():
    game = position(
        hands=[["blue:9", "blue:4"], ["green:1"]],
        lead="red:3",
        on_top=["+3", "+3_breaker"],
        draw_pile_size=0,
    )
    below = len(game.discard) - 3
    game.apply(A.draw(1))
    assert game.discard == [P.parse("red:3"), cards.PLUS_THREE, cards.BREAKER]
    assert len(game.draw_pile) == below - 1
    assert ("reshuffle", below) in game.events
    assert game.card_count() == 116


def test_r20_draws_what_there_is():
    game = position(hands=[["blue:9", "blue:4"], ["green:1"]], lead="red:+2",
                    pending=6, draw_pile_size=2)
    # Move everything under the Leading Card to seat 1: the draw pile is all there is.
    for code in game.discard[:-1]:
        game.hands[1][code] = game.hands[1].get(code, 0) + 1
        game.sizes[1] += 1
    game.discard = game.discard[-1:]
    assert game.card_count() == 116 and len(game.draw_pile) == 2
    game.apply(A.draw(6))
    assert game.sizes[0] == 4
    assert game.events[-1][:4] == ("draw", 0, 2, "chain")



# ---------------------------------------------------------------- results


def test_r22_ranking_by_points_and_ties_share():
    game = position(
        hands=[["red:5"], ["blue:9", "king"], ["green:4", "blue:stop"], ["yellow:9", "+3"]],
        lead="red:3",
    )
    game.apply(play("red:5"))
    result = game.result()
    assert result.points == (0, 29, 14, 29)
    assert result.places == (1, 3, 2, 3)


def test_r22_scoring_values_are_configurable():
    from referee.rules import Scoring

    rules = Rules(scoring=Scoring(colored_action=5, colorless=50))
    game = position(hands=[["red:5"], ["blue:stop", "king"]], lead="red:3", rules=rules)
    assert game.result().points == (5, 55)


def test_r23_forfeit_ranks_last_and_returns_the_hand():
    game = position(hands=[["red:5", "red:6"], ["blue:9", "king"], ["green:4", "red:9"]],
                    lead="red:3")
    game.forfeit(1, "timeout", "late")
    assert game.draw_pile[:2] == [P.parse("blue:9"), cards.KING]
    assert game.sizes[1] == 0 and not game.active[1]
    game.apply(play("red:5"), last_card=True)
    assert game.turn == 2  # seat 1 is skipped
    game.forfeit(2, "crash")
    assert game.is_over and game.winner == 0 and game.result().reason == "last_standing"
    assert game.result().places == (1, 3, 2)  # the earlier forfeit ranks lower


def test_r23_a_forfeited_seat_shows_a_hand_size_of_zero_in_every_view():
    game = position(hands=[["red:5", "red:6"], ["blue:9", "king"], ["green:4", "red:9"]],
                    lead="red:3")
    game.forfeit(1, "timeout", "late")
    for seat in (0, 2):
        seen = view(game, seat)
        assert seen["hand_sizes"] == [2, 0, 2] and seen["active"] == [True, False, True]


def test_r23_forfeit_in_a_run_ends_it_closed_and_chain_passes():
    game = position(hands=[["red:taki", "red:5", "red:6"], ["blue:9"], ["green:4"]],
                    lead="red:3")
    game.apply(play("red:taki"))
    game.apply(play("red:5"))
    game.forfeit(0, "illegal")
    assert game.open_run == cards.NO_COLOR and game.turn == 1 and game.phase == PLAY
    game = position(hands=[["red:5"], ["blue:9"], ["green:4"]], lead="red:+2", pending=4,
                    turn=1)
    game.forfeit(1, "timeout")
    assert game.turn == 2 and game.pending == 4


def test_r23_forfeit_during_breaker_window():
    game = position(hands=[["+3", "red:5"], ["+3_breaker", "blue:1"], ["green:1"]],
                    lead="red:3")
    game.apply(play("+3"), last_card=True)
    game.apply(A.BREAK_ACTION, 1)
    game.forfeit(2, "timeout")
    assert game.phase == PLAY
    # Seat 1's break went through (the window closed when the last reactor left).
    assert ("break", 1) in game.events


def test_r24_series_penalty_points_and_rotation():
    series = Series(players=2, rules=SeriesRules(games=2))
    game = position(hands=[["red:5"], ["blue:9", "king"]], lead="red:3")
    game.apply(play("red:5"))
    assert series.next_first_seat() == 0
    assert series.record(game.result()) == (-100, 29)
    assert series.next_first_seat() == 1
    game = position(hands=[["red:5", "red:6"], ["blue:9"]], lead="blue:3", turn=1)
    game.apply(play("blue:9"))
    series.record(game.result())
    assert series.totals == [-100 + 11, 29 - 100]
    assert series.finished and series.places() == (1, 2)


def test_d10_series_forfeit_points():
    game = position(hands=[["red:5"], ["blue:9", "king"], ["green:1"]], lead="red:3")
    game.forfeit(1, "crash")
    game.apply(play("red:5"))
    assert penalty_points(game.result(), SeriesRules()) == (-100, 129, 1)


def test_r24_pyramid_stage_advance_and_win():
    rules = Rules(pyramid=True)
    game = position(hands=[["red:5"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
    game.stages = [8, 8]
    game.apply(play("red:5"))
    assert not game.is_over and game.stages == [7, 8] and game.sizes[0] == 7
    assert game.turn == 1
    game = position(hands=[["red:5"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
    game.stages = [1, 3]
    game.apply(play("red:5"))
    assert game.is_over and game.winner == 0
    assert game.result().places == (1, 2)


def test_r24_pyramid_last_card_acts_but_king_free_action_lapses():
    rules = Rules(pyramid=True)
    game = position(hands=[["red:+2"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
    game.stages = [8, 8]
    game.apply(play("red:+2"))
    assert game.pending == 2 and game.turn == 1
    game = position(hands=[["red:1"], ["blue:+2"]], lead="red:+2", pending=2, rules=rules,
                    turn=1)
    game.stages = [8, 8]
    game.apply(play("blue:+2"))
    assert game.pending == 4 and game.turn == 0 and game.sizes[1] == 7
    game = position(hands=[["king"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
    game.stages = [5, 8]
    game.apply(play("king"))
    assert game.phase == PLAY and game.turn == 1 and game.sizes[0] == 4
    game = position(hands=[["red:stop"], ["blue:9"], ["green:1"]], lead="red:3", rules=rules)
    game.stages = [5, 8, 8]
    game.apply(play("red:stop"))
    assert game.turn == 2


def test_r24_pyramid_plus3_opens_the_window():
    rules = Rules(pyramid=True)
    game = position(hands=[["+3"], ["blue:9", "blue:4"]], lead="red:3", rules=rules)
    game.stages = [4, 8]
    game.apply(play("+3"), last_card=True)
    assert game.phase == REACT and game.sizes[0] == 3
    game.apply(A.PASS_ACTION, 1)
    assert game.sizes[1] == 5
