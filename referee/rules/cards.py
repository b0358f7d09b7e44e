"""Cards as small integers, with their colors, figures, names and point values.

A card is an ``int`` code. Colored cards are ``color * 13 + figure`` (codes 0-51);
colorless cards follow (52-57). Two physical copies of a card share one code: cards
carry no identity, so nothing about a card reveals where it lay in the deck.
"""

from __future__ import annotations

from collections.abc import Iterable

COLORS: tuple[str, ...] = ("red", "green", "blue", "yellow")
RED, GREEN, BLUE, YELLOW = range(4)
NO_COLOR = -1

# Figures. Colored figures 0-12, colorless 13-18.
NUMBER_VALUES: tuple[int, ...] = (1, 3, 4, 5, 6, 7, 8, 9)
STOP, PLUS_TWO, CHANGE_DIRECTION, PLUS, TAKI = 8, 9, 10, 11, 12
CHANGE_COLOR_FIG, SUPER_TAKI_FIG, KING_FIG, PLUS_THREE_FIG, BREAKER_FIG, CRAZY_FIG = range(13, 19)

FIGURE_NAMES: tuple[str, ...] = (
    *(str(v) for v in NUMBER_VALUES),
    "stop",
    "+2",
    "change_direction",
    "plus",
    "taki",
    "change_color",
    "super_taki",
    "king",
    "+3",
    "+3_breaker",
    "crazy",
)

COLORED_FIGURES = 13

# Colorless card codes.
CHANGE_COLOR = 52
SUPER_TAKI = 53
KING = 54
PLUS_THREE = 55
BREAKER = 56
CRAZY = 57
CARD_COUNT = 58


def card(color: int, figure: int) -> int:
    """The code of the colored card ``figure`` in ``color``."""
    if not 0 <= color < 4 or not 0 <= figure < COLORED_FIGURES:
        raise ValueError(f"no colored card with color {color} and figure {figure}")
    return color * COLORED_FIGURES + figure


def number(color: int, value: int) -> int:
    """The code of the number card ``value`` (1, 3-9) in ``color``."""
    return card(color, NUMBER_VALUES.index(value))


# Lookup tables indexed by card code: the engine's hot paths read these.
COLOR_OF: tuple[int, ...] = tuple(
    c // COLORED_FIGURES if c < 52 else NO_COLOR for c in range(CARD_COUNT)
)
FIGURE_OF: tuple[int, ...] = tuple(
    c % COLORED_FIGURES if c < 52 else c - 52 + CHANGE_COLOR_FIG for c in range(CARD_COUNT)
)
IS_NUMBER: tuple[bool, ...] = tuple(FIGURE_OF[c] < len(NUMBER_VALUES) for c in range(CARD_COUNT))
#: Transparent cards leave the Leading Card and the current color as they were.
IS_TRANSPARENT: tuple[bool, ...] = tuple(
    c in (PLUS_THREE, BREAKER, CRAZY) for c in range(CARD_COUNT)
)


def name(code: int) -> str:
    """The wire name of a card: ``"red:5"``, ``"blue:+2"``, ``"king"``."""
    color = COLOR_OF[code]
    fig = FIGURE_NAMES[FIGURE_OF[code]]
    return fig if color == NO_COLOR else f"{COLORS[color]}:{fig}"


NAMES: tuple[str, ...] = tuple(name(c) for c in range(CARD_COUNT))
_BY_NAME: dict[str, int] = {n: c for c, n in enumerate(NAMES)}


def parse(text: str) -> int:
    """The card code for a wire name; raises ValueError for an unknown name."""
    try:
        return _BY_NAME[text]
    except KeyError:
        raise ValueError(f"unknown card {text!r}") from None


def parse_color(text: str) -> int:
    try:
        return COLORS.index(text)
    except ValueError:
        raise ValueError(f"unknown color {text!r}") from None


def sort_key(code: int) -> tuple[int, int]:
    """Hands are shown sorted by color, then figure (colorless cards last). Codes are
    numbered in that order, so sorting the codes themselves gives it too (and is what
    the engine does)."""
    return (COLOR_OF[code] if COLOR_OF[code] != NO_COLOR else 4, FIGURE_OF[code])


def sorted_names(codes: Iterable[int]) -> list[str]:
    return [NAMES[c] for c in sorted(codes)]
