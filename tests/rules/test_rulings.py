"""One test (at least) per ruling of RULES.md, on hand-built positions."""

from __future__ import annotations

import random
from collections import Counter

import attrs
import pytest

from referee.rules import IllegalActionError, Rules, RulesError, cards, new_game, view
from referee.rules import actions as A
from referee.rules.config import DealError
from referee.rules.formats import Series, SeriesRules, first_seat, penalty_points
from referee.rules.phases import AGAIN, KING, OVER, PLAY, REACT, RUN
from referee.rules.position import position


def play(name: str) -> A.Action:
    return A.play(cards.parse(name))


def change_color(color: str) -> A.Action:
    return A.play(cards.CHANGE_COLOR, color=cards.parse_color(color))


def hand(game, seat: int) -> list[str]:
    return cards.sorted_names(game.hand(seat))


def kinds(actions) -> set[str]:
    return {str(a) for a in actions}


def event_types(game, since: int = 0) -> list[str]:
    return [e[0] for e in game.events[since:]]


# ---------------------------------------------------------------- the deck


def test_r01_deck_has_116_cards_in_two_sets():
    deck = Rules().deck_cards()
    assert len(deck) == 116
    counts = Counter(deck)
    for color in range(4):
        for fig in range(cards.COLORED_FIGURES):
            assert counts[cards.card(color, fig)] == 2
    assert sum(counts[cards.card(c, f)] for c in range(4) for f in range(13)) == 104
    assert counts[cards.CHANGE_COLOR] == 4
    for code in (cards.SUPER_TAKI, cards.KING, cards.PLUS_THREE, cards.BREAKER):
        assert counts[code] == 2
    assert "red:2" not in cards.NAMES and "red:+2" in cards.NAMES


def test_r01_classic_preset_has_112_cards_without_plus3():
    deck = Rules.preset("super-taki-classic").deck_cards()
    assert len(deck) == 112
    assert cards.PLUS_THREE not in deck and cards.BREAKER not in deck


# ---------------------------------------------------------------- setup


@pytest.mark.parametrize("players", [2, 5, 10])
def test_r02_deal_eight_and_flip_a_colored_leading_card(players):
    for seed in range(40):
        game = new_game(players, seed)
        assert game.sizes == [8] * players
        assert cards.COLOR_OF[game.lead] != cards.NO_COLOR
        assert game.discard == [game.lead]
        assert game.pending == 0 and game.direction == 1 and game.phase == PLAY
        assert game.card_count() == 116


class ColorlessOnTop(random.Random):
    """The worst shuffle for the first flip: the hands (the top ``dealt`` cards) take
    only colored cards, and every colorless card lies on top of what is left."""

    def __init__(self, dealt):
        super().__init__(0)
        self.dealt = dealt

    def shuffle(self, x, *args, **kwargs):
        colored = [code for code in x if cards.COLOR_OF[code] != cards.NO_COLOR]
        colorless = [code for code in x if cards.COLOR_OF[code] == cards.NO_COLOR]
        cut = len(colored) - self.dealt
        x[:] = colored[:cut] + colorless + colored[cut:]


@pytest.mark.parametrize("players", range(2, 11))
def test_r02_the_deal_leaves_a_colored_card_to_lead(players):
    # 104 colored cards: the hands may take all but one of them, whatever the shuffle.
    for rules in (Rules(), Rules.preset("super-taki-classic"), Rules(crazy_card=True)):
        most = rules.max_hand_size(players)
        assert players * most <= 103 < players * (most + 1)
        dealt = Rules(deck=rules.deck, crazy_card=rules.crazy_card, hand_size=most)
        deck_size = len(rules.deck_cards())
        worst = ColorlessOnTop(players * most)
        for rng in [worst, *(random.Random(seed) for seed in range(20))]:
            game = new_game(players, rng, dealt)
            assert game.sizes == [most] * players
            assert [len(game.hand(seat)) for seat in range(players)] == game.sizes
            assert cards.COLOR_OF[game.lead] != cards.NO_COLOR
            assert game.card_count() == deck_size
            if rng is worst:  # every colorless card was flipped to the bottom
                colorless = deck_size - 104
                assert all(cards.COLOR_OF[c] == cards.NO_COLOR
                           for c in game.draw_pile[:colorless])
        with pytest.raises(DealError, match=f"hand_size {most + 1} is too large for {players}"):
            new_game(players, 0, attrs.evolve(dealt, hand_size=most + 1))


def test_r02_a_hand_size_that_cannot_be_dealt_is_refused_at_once():
    # Dealt anyway, these would leave only colorless cards to flip (2 x 57), give the
    # last seat fewer cards than its hand size (10 x 12) or run out of cards (2 x 58).
    for players, hand_size in ((2, 57), (10, 12), (2, 58), (3, 1000)):
        with pytest.raises(DealError) as info:
            new_game(players, 33, Rules(hand_size=hand_size))
        assert isinstance(info.value, RulesError) and isinstance(info.value, ValueError)


def test_r02_colorless_flips_go_to_the_bottom():
    # Find a seed whose first flip is colorless; it must end at the bottom of the pile.
    for seed in range(500):
        deck = Rules().deck_cards()
        import random

        random.Random(seed).shuffle(deck)
        rest = deck[: len(deck) - 16]
        if cards.COLOR_OF[rest[-1]] == cards.NO_COLOR:
            game = new_game(2, seed)
            assert game.draw_pile[0] == rest[-1]
            assert cards.COLOR_OF[game.lead] != cards.NO_COLOR
            return
    pytest.fail("no seed with a colorless first flip")


@pytest.mark.parametrize(
    "figure", [cards.STOP, cards.PLUS_TWO, cards.CHANGE_DIRECTION, cards.PLUS, cards.TAKI]
)
def test_r02_first_leading_action_card_does_nothing(figure):
    def number_plays(game):
        return [a for a in game.legal_actions()
                if a.kind == A.PLAY and cards.IS_NUMBER[a.card]]

    games = (new_game(3, seed) for seed in range(3000))
    game = next((g for g in games if cards.FIGURE_OF[g.lead] == figure and number_plays(g)),
                None)
    assert game is not None, f"no seed in range starts with a {cards.FIGURE_NAMES[figure]}"
    # No skip, no chain, no reversal, no play-again and no run: seat 0 simply plays a
    # number, and seat 1 comes next.
    assert game.turn == 0 and game.phase == PLAY and game.events == []
    assert game.pending == 0 and game.direction == 1
    assert game.open_run == cards.NO_COLOR  # D2
    assert all(a.kind != A.DRAW or a.count == 1 for a in game.legal_actions())
    game.apply(number_plays(game)[0], last_card=True)
    assert game.phase == PLAY and game.turn == 1


def test_d02_taki_as_first_leading_card_opens_no_run():
    game = position(hands=[["red:5"], ["blue:5"]], lead="red:taki")
    assert game.open_run == cards.NO_COLOR
    assert kinds(game.legal_actions()) == {"play red:5"}


def test_r03_seat_zero_starts_and_first_seat_rotates():
    assert new_game(3, 1).turn == 0
    assert new_game(3, 1, first_seat=2).turn == 2
    assert [first_seat(i, 3) for i in range(5)] == [0, 1, 2, 0, 1]


def test_r03_play_goes_up_the_seats():
    game = position(hands=[["red:5", "red:6"], ["red:7", "red:8"], ["red:9", "red:1"]],
                    lead="red:3")
    game.apply(play("red:5"))
    assert game.turn == 1
    game.apply(play("red:7"))
    assert game.turn == 2


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


def test_r07_king_may_be_the_last_card():
    game = position(hands=[["king"], ["blue:1"]], lead="red:3")
    game.apply(play("king"))
    assert game.is_over and game.winner == 0


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
    assert game.color == cards.BLUE and game.turn == 1
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
    assert game.color == cards.RED
    game.apply(play("red:4"))
    assert game.color == cards.RED


def test_r12_change_color_ends_the_run_closed():
    game = position(hands=[["red:taki", "red:5", "change_color", "blue:9"], ["blue:1"]],
                    lead="red:3")
    game.apply(play("red:taki"))
    game.apply(play("red:5"))
    game.apply(change_color("green"))
    assert game.open_run == cards.NO_COLOR and game.color == cards.GREEN
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
    assert game.open_run == cards.RED and game.turn == 1
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
    assert game.open_run == cards.RED and game.turn == 1
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
    assert game.open_run == cards.RED


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
    assert game.open_run == cards.RED


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
    assert game.open_run == cards.RED and game.turn == 2
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
    assert game.phase == RUN and game.run_color == cards.BLUE and game.color == cards.BLUE
    assert kinds(game.legal_actions()) == {"play blue:5", "leave_run_open"}


def test_r14_super_taki_after_king_keeps_the_color_before_the_king():
    game = position(hands=[["king", "super_taki", "yellow:5", "green:5"], ["blue:1"]],
                    lead="yellow:3")
    game.apply(play("king"))
    assert game.color == cards.YELLOW
    game.apply(play("super_taki"))
    assert game.run_color == cards.YELLOW
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
    assert game.color == cards.RED
    game.apply(play("green:9"), last_card=True)
    assert game.color == cards.GREEN and game.turn == 1


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
    assert game.lead == cards.parse("red:3") and game.color == cards.RED  # transparent
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
    assert game.lead == cards.parse("red:3")


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
    assert game.lead == cards.parse("red:3")


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
    assert game.discard == [cards.parse("red:3"), cards.PLUS_THREE, cards.BREAKER]
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


def test_r21_action_limit_ends_the_game_without_winner():
    game = new_game(3, 1, Rules(action_limit=5))
    while not game.is_over:
        for seat in game.to_act():
            game.apply(game.legal_actions(seat)[-1], seat)
    assert game.action_count == 5 and game.winner is None
    assert game.result().reason == "limit"


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
    assert game.draw_pile[:2] == [cards.parse("blue:9"), cards.KING]
    assert game.sizes[1] == 0 and not game.active[1]
    game.apply(play("red:5"), last_card=True)
    assert game.turn == 2  # seat 1 is skipped
    game.forfeit(2, "crash")
    assert game.is_over and game.winner == 0 and game.result().reason == "last_standing"
    assert game.result().places == (1, 3, 2)  # the earlier forfeit ranks lower


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
    assert game.phase == PLAY and game.turn == 1 and game.open_run == cards.RED


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
    assert game.lead == cards.parse("red:3") and game.color == cards.RED
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
    combo = A.combo(cards.RED)
    assert combo in game.legal_actions()
    game.apply(combo, last_card=True)
    assert game.sizes == [1, 4, 4] and game.turn == 1
    assert game.lead == cards.parse("red:plus")


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
    assert set(drawn[-2:]) == {cards.parse("yellow:1"), cards.parse("yellow:4")}


def test_d12_view_shows_sorted_hand_and_only_counts_for_others():
    game = position(hands=[["red:5", "blue:9"], ["green:1", "green:4"]], lead="red:3",
                    draw_pile=["yellow:9"])
    game.apply(play("red:5"), last_card=True)
    game.apply(A.draw(1), 1)
    mine = view(game, 1)
    theirs = view(game, 0)
    assert mine["hand"] == ["green:1", "green:4", "yellow:9"]
    draw_mine = next(e for e in mine["events"] if e["type"] == "draw")
    draw_theirs = next(e for e in theirs["events"] if e["type"] == "draw")
    assert draw_mine["cards"] == ["yellow:9"] and "cards" not in draw_theirs
    assert theirs["hand_sizes"] == [1, 3]


def test_d13_last_one_standing_wins():
    game = new_game(3, 4)
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
