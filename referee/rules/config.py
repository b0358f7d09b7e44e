"""Rule sets: the deck preset, the variant flags and the scoring values.

``Rules.preset("super-taki-2018")`` is the default game of RULES.md. Every flag that a
ruling or a variant names is a field here, so a rule set is one frozen value that can be
stored with a replay and sent to the bots.
"""

from __future__ import annotations

from typing import Any

import attrs

from . import cards
from .errors import RulesError

DECKS = ("super-taki-2018", "super-taki-classic")

#: The revision of what the engine does with a game's actions. It grows with every change
#: that can make the same deal and actions play out differently, so that replays and
#: league databases of another revision are refused rather than mixed (RULES.md,
#: "Revisions").
RULES_REVISION = 3


class DealError(RulesError, ValueError):
    """Rules that cannot deal a game for that many players (R1-R2): the hands would take
    cards that must stay in the deck."""


@attrs.frozen
class Scoring:
    """Points a card left in hand is worth (R22). Number cards score their face value."""

    colored_action: int = attrs.field(default=10, validator=attrs.validators.ge(0))
    colorless: int = attrs.field(default=20, validator=attrs.validators.ge(0))

    def points(self, code: int) -> int:
        if cards.IS_NUMBER[code]:
            return cards.NUMBER_VALUES[cards.FIGURE_OF[code]]
        if cards.COLOR_OF[code] == cards.NO_COLOR:
            return self.colorless
        return self.colored_action


@attrs.frozen
class Rules:
    """Everything that decides how a game is played, except the players and the seed."""

    name: str = "super-taki-2018"
    deck: str = attrs.field(default="super-taki-2018", validator=attrs.validators.in_(DECKS))
    hand_size: int = attrs.field(default=8, validator=attrs.validators.ge(1))
    #: R5: allow drawing while holding a legal play.
    voluntary_draw: bool = False
    #: Variant: two Crazy Cards (every hand passes to the next seat in the current direction).
    crazy_card: bool = False
    #: Variant: the old "+3 rule" (a 3 and a Plus of one color played together).
    plus3_rule: bool = False
    #: R6: cards drawn for a missing "last card" declaration; 0 turns the rule off.
    last_card_penalty: int = attrs.field(default=4, validator=attrs.validators.ge(0))
    #: R21: the game stops after this many applied actions.
    action_limit: int = attrs.field(default=10_000, validator=attrs.validators.ge(1))
    #: R24: the Pyramid Tournament (stages 8 down to 1) instead of a single game.
    pyramid: bool = False
    scoring: Scoring = Scoring()

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Rules:
        """A named rule set with optional flag overrides; unknown names raise ValueError."""
        if name == "super-taki-2018":
            base: dict[str, Any] = {"name": name, "deck": "super-taki-2018"}
        elif name == "super-taki-classic":
            base = {"name": name, "deck": "super-taki-classic"}
        else:
            raise ValueError(f"unknown rules preset {name!r} (known: {', '.join(PRESETS)})")
        base.update(overrides)
        if "scoring" in base and isinstance(base["scoring"], dict):
            base["scoring"] = Scoring(**base["scoring"])
        return cls(**base)

    def deck_cards(self) -> list[int]:
        """The full deck of this rule set, in a fixed order (shuffled by the game)."""
        deck: list[int] = []
        for color in range(4):
            for fig in range(cards.COLORED_FIGURES):
                deck += [cards.card(color, fig)] * 2
        deck += [cards.CHANGE_COLOR] * 4 + [cards.SUPER_TAKI] * 2 + [cards.KING] * 2
        if self.deck == "super-taki-2018":
            deck += [cards.PLUS_THREE] * 2 + [cards.BREAKER] * 2
        if self.crazy_card:
            deck += [cards.CRAZY] * 2
        return deck

    def max_hand_size(self, players: int) -> int:
        """The largest ``hand_size`` that deals a game of ``players``: after the deal, at
        least one colored card must remain to lead (R2), whatever the shuffle, so the
        hands may take every card but the colorless ones and one colored card."""
        deck = self.deck_cards()
        colored = sum(cards.COLOR_OF[code] != cards.NO_COLOR for code in deck)
        return (colored - 1) // players

    def check_deal(self, players: int) -> None:
        """Raise :class:`DealError` when ``hand_size`` is too large for ``players``."""
        most = self.max_hand_size(players)
        if self.hand_size > most:
            raise DealError(
                f"hand_size {self.hand_size} is too large for {players} players: the"
                f" deck deals at most {most} cards each ({players} x hand_size must leave a"
                " colored card to lead)"
            )

    def to_wire(self) -> dict[str, Any]:
        """The rule set as plain data (for replays and the game_start message)."""
        return attrs.asdict(self)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Rules:
        """The rule set of :meth:`to_wire`'s data: its preset (``name``, the default one
        when missing) with the other fields as overrides; ValueError or TypeError for an
        unknown preset, flag or value."""
        flags = dict(data)
        return cls.preset(flags.pop("name", cls().name), **flags)


PRESETS = ("super-taki-2018", "super-taki-classic")
