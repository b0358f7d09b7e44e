"""Card codes and names."""

from referee.rules import cards as C


def test_codes_are_numbered_in_display_order() -> None:
    """Hands are sorted by plain code order; that must be color, then figure, with the
    colorless cards last (cards.sort_key)."""
    codes = list(range(C.CARD_COUNT))
    assert sorted(codes, key=C.sort_key) == codes
    assert C.sorted_names([C.KING, C.number(1, 9), C.number(0, 5), C.number(1, 1)]) == [
        "red:5",
        "green:1",
        "green:9",
        "king",
    ]


def test_names_round_trip() -> None:
    for code in range(C.CARD_COUNT):
        assert C.parse(C.NAMES[code]) == code
