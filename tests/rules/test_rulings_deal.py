"""Rulings R1-R3: the deck, the deal and who plays first.

The tests on hand-built positions run once per color (the ``palette`` fixture,
tests/rules/palette.py).
"""

from __future__ import annotations

import random
from collections import Counter

import attrs
import pytest
from palette import kinds, play, position

from referee.rules import Rules, RulesError, cards, new_game
from referee.rules import actions as A
from referee.rules.config import DealError
from referee.rules.formats import first_seat
from referee.rules.phases import PLAY

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


@pytest.mark.parametrize("color", range(4), ids=list(cards.COLORS))
@pytest.mark.parametrize(
    "figure", [cards.STOP, cards.PLUS_TWO, cards.CHANGE_DIRECTION, cards.PLUS, cards.TAKI],
    ids=lambda figure: cards.FIGURE_NAMES[figure],
)
def test_r02_first_leading_action_card_does_nothing(figure, color):
    def number_plays(game):
        return [a for a in game.legal_actions()
                if a.kind == A.PLAY and cards.IS_NUMBER[a.card]]

    games = (new_game(3, seed) for seed in range(3000))
    lead = cards.card(color, figure)
    game = next((g for g in games if g.lead == lead and number_plays(g)), None)
    assert game is not None, f"no seed in range starts with a {cards.NAMES[lead]}"
    # No skip, no chain, no reversal, no play-again and no run: seat 0 simply plays a
    # number, and seat 1 comes next.
    assert game.turn == 0 and game.phase == PLAY and game.events == []
    assert game.pending == 0 and game.direction == 1
    assert game.open_run == cards.NO_COLOR  # D2
    assert all(a.kind != A.DRAW or a.count == 1 for a in game.legal_actions())
    game.apply(number_plays(game)[0], last_card=True)
    assert game.phase == PLAY and game.turn == 1


@pytest.mark.usefixtures("palette")
def test_d02_taki_as_first_leading_card_opens_no_run():
    game = position(hands=[["red:5"], ["blue:5"]], lead="red:taki")
    assert game.open_run == cards.NO_COLOR
    assert kinds(game.legal_actions()) == {"play red:5"}


def test_r03_seat_zero_starts_and_first_seat_rotates():
    assert new_game(3, 1).turn == 0
    assert new_game(3, 1, first_seat=2).turn == 2
    assert [first_seat(i, 3) for i in range(5)] == [0, 1, 2, 0, 1]


@pytest.mark.usefixtures("palette")
def test_r03_play_goes_up_the_seats():
    game = position(hands=[["red:5", "red:6"], ["red:7", "red:8"], ["red:9", "red:1"]],
                    lead="red:3")
    game.apply(play("red:5"))
    assert game.turn == 1
    game.apply(play("red:7"))
    assert game.turn == 2
