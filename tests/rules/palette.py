"""Ruling tests that cover every card of a kind, whatever color the test names.

A ruling test is written with canonical card names ("red:plus" on "red:3", "blue:1" in
the other hand). The ``palette`` fixture (tests/rules/conftest.py) runs it four times, once
under each cyclic shift of the four colors: red stands for red, then green, then blue,
then yellow, and every other color moves along with it. The helpers here translate the
names a test writes into the shifted palette before they reach the engine, and translate
what the engine answers (legal actions, hands) back, so the test reads the same under
every shift while the engine really plays ``green:plus``, ``blue:plus`` and
``yellow:plus``. A test that passed for ``red:plus`` alone would fail under the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from referee.rules import actions as A
from referee.rules import cards
from referee.rules.position import position as build_position
from referee.rules.state import GameState

_COLOR_WORD = re.compile(r"\b(red|green|blue|yellow)\b")


class Palette:
    """The current color shift: ``shift`` steps along red, green, blue, yellow."""

    def __init__(self) -> None:
        self.shift = 0

    def color(self, name: str) -> int:
        """The color a test's canonical color ``name`` stands for."""
        return (cards.parse_color(name) + self.shift) % 4

    def tint(self, text: str) -> str:
        """A canonical card or action name in the shifted palette."""
        return _COLOR_WORD.sub(lambda m: cards.COLORS[self.color(m.group(1))], text)

    def canon(self, text: str) -> str:
        """A shifted card or action name back in the canonical palette."""
        return _COLOR_WORD.sub(
            lambda m: cards.COLORS[(cards.parse_color(m.group(1)) - self.shift) % 4], text
        )

    def parse(self, name: str) -> int:
        """The card code of a canonical card name."""
        return cards.parse(self.tint(name))

    @property
    def RED(self) -> int:
        return self.color("red")

    @property
    def GREEN(self) -> int:
        return self.color("green")

    @property
    def BLUE(self) -> int:
        return self.color("blue")

    @property
    def YELLOW(self) -> int:
        return self.color("yellow")


#: The palette in force; the ``palette`` fixture sets its shift for each run of a test.
P = Palette()


def _tint_card(card: str | int) -> str | int:
    return P.tint(card) if isinstance(card, str) else card


def position(
    hands: Sequence[Sequence[str | int]], lead: str | int, **kwargs: Any
) -> GameState:
    """:func:`referee.rules.position.position` with canonical names."""
    for key in ("color", "open_run"):
        if kwargs.get(key) is not None:
            kwargs[key] = P.tint(kwargs[key])
    for key in ("on_top", "draw_pile"):
        if kwargs.get(key) is not None:
            kwargs[key] = [_tint_card(c) for c in kwargs[key]]
    return build_position(
        hands=[[_tint_card(c) for c in h] for h in hands], lead=_tint_card(lead), **kwargs
    )


def play(name: str) -> A.Action:
    return A.play(P.parse(name))


def change_color(color: str) -> A.Action:
    return A.play(cards.CHANGE_COLOR, color=P.color(color))


def hand(game: GameState, seat: int) -> list[str]:
    """A seat's hand in canonical names, in display order of the canonical names."""
    return sorted((P.canon(n) for n in cards.sorted_names(game.hand(seat))),
                  key=cards.parse)


def kinds(actions: Iterable[A.Action]) -> set[str]:
    return {P.canon(str(a)) for a in actions}
