"""The scenarios of ``taki-referee check``: every situation PROTOCOL.md defines.

Each scenario starts from a constructed position (``referee.rules.position``) or a
seeded deal, so the situation it names comes whatever the bot answers: where the bot
could steer away from it, its hand leaves it one legal card. Every game stops after
:data:`LENGTH` actions (the ``action_limit`` flag, R21) unless it ends sooner.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from referee.compliance.scenario import Asked, Scenario
from referee.rules import Action, GameState, Rules, new_game, position
from referee.rules import actions as A
from referee.rules import cards as C

__all__ = ["LENGTH", "SCENARIOS", "scenario_named"]

#: Actions after which a scenario's game stops, unranked by a win (R21).
LENGTH = 60


def _rules(preset: str = "super-taki-2018", **flags: Any) -> Rules:
    flags.setdefault("action_limit", LENGTH)
    return Rules.preset(preset, **flags)


def _play(card: str) -> Action:
    return A.play(C.parse(card))


def _at(hands: Sequence[Sequence[str]], lead: str, *, rules: Rules | None = None,
        stages: Sequence[int] | None = None, **options: Any) -> Callable[[], GameState]:
    """A position at the start of a turn (``referee.rules.position``), under the
    scenario rules unless ``rules`` is given; ``stages`` sets Pyramid stages."""

    def start() -> GameState:
        state = position(hands, lead, rules=rules or _rules(), **options)
        if stages is not None:
            state.stages = list(stages)
        return state

    return start


def _forfeited(seat: int, start: Callable[[], GameState]) -> Callable[[], GameState]:
    """``start``'s position after ``seat`` left the game (a crash, R23)."""

    def forfeited() -> GameState:
        state = start()
        state.forfeit(seat, "crash", "closed its output: the bot exited with status 1")
        return state

    return forfeited


def _deal(players: int, seed: int, rules: Rules | None = None) -> Callable[[], GameState]:
    """A seeded deal: a whole game from its start."""
    return lambda: new_game(players, seed, rules or _rules())


def _own_plus3_in_chain() -> GameState:
    """Seat 0 (the bot) answered a +2 chain with a +3 and nobody broke it, so the chain,
    its +3 included, now lies on seat 1, who holds a +3 of its own."""
    state = position([["+3", "+3_breaker", "green:5", "blue:1"],
                      ["+3", "yellow:4", "yellow:6"], ["green:1", "green:4"]],
                     "red:+2", pending=2, rules=_rules())
    state.apply(_play("+3"), 0)
    for seat in (1, 2):
        state.apply(A.PASS_ACTION, seat)
    return state


#: 40 cards that answer no +2 chain: every number of green, blue and yellow but 8.
_NO_ANSWERS = [f"{color}:{n}" for color in ("green", "blue", "yellow") for n in (1, 3, 4, 5, 6, 7)
               for _ in range(2)] + ["green:8"] * 2 + ["blue:8"] * 2

_DECIDE = (
    Scenario("decide-play", "decide", "an ordinary turn with plays of every kind of card",
             _at([["red:5", "red:9", "green:5", "change_color", "super_taki", "king", "+3"],
                  ["blue:1", "blue:4"]], "red:3"),
             asked=(Asked("decide", "play", ("play",)),)),
    Scenario("decide-draw", "decide", "no card may be played: the only action is a draw",
             _at([["blue:1", "blue:4", "green:6"], ["yellow:1", "yellow:4"]], "red:3"),
             asked=(Asked("decide", "play", ("draw",), exactly=True),)),
    Scenario("decide-change-color", "decide", "a Change Color: one entry per color",
             _at([["change_color", "blue:1"], ["yellow:1", "yellow:4"]], "red:3"),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("decide-taki-run-open", "decide",
             "a TAKI opens a run: add a card of its color or leave it open",
             _at([["red:taki", "red:5", "blue:1"], ["yellow:1", "yellow:4"]], "green:taki"),
             asked=(Asked("decide", "run", ("leave_run_open",)),)),
    Scenario("decide-taki-run-close", "decide",
             "an open run to continue, then close it or leave it open",
             _at([["red:7", "red:8", "blue:1"], ["yellow:1", "yellow:4"]], "red:5",
                 open_run="red"),
             asked=(Asked("decide", "run", ("close_run", "leave_run_open")),)),
    Scenario("decide-super-taki", "decide", "a SuperTaki opens a run in the current color",
             _at([["super_taki", "blue:1", "blue:4"], ["yellow:1", "yellow:4"]], "red:3"),
             asked=(Asked("decide", "run", ("leave_run_open",)),)),
    Scenario("decide-plus", "decide", "a Plus: play again, twice in a row",
             _at([["green:plus", "blue:plus", "blue:5"], ["yellow:1", "yellow:4"]], "green:3"),
             asked=(Asked("decide", "again", ("play",)),)),
    Scenario("decide-plus-draw", "decide", "a Plus with nothing to play after it: draw one",
             _at([["green:plus", "blue:5", "blue:6"], ["yellow:1", "yellow:4"]], "green:3"),
             asked=(Asked("decide", "again", ("draw",), exactly=True),)),
    Scenario("decide-king", "decide", "a King's free action: any card, or end the turn",
             _at([["king", "blue:5", "green:1"], ["yellow:1", "yellow:4"]], "red:3"),
             asked=(Asked("decide", "king", ("play", "end_turn"), exactly=True),)),
    Scenario("decide-plus2-answer", "decide",
             "a +2 chain to answer with a +2, a +3 or a King, or to draw",
             _at([["blue:+2", "king", "+3", "green:5"], ["yellow:1", "yellow:4"]], "red:+2",
                 pending=2),
             asked=(Asked("decide", "play", ("play", "draw"), exactly=True),)),
    Scenario("decide-plus2-draw", "decide", "a +2 chain of 6 with no answer: draw 6",
             _at([["green:5", "blue:1"], ["yellow:1", "yellow:4"]], "red:+2", pending=6),
             asked=(Asked("decide", "play", ("draw",), exactly=True),)),
    Scenario("decide-plus3", "decide", "the bot's +3, which the house breaks",
             _at([["+3", "blue:1", "blue:4"], ["+3_breaker", "yellow:1", "yellow:4"]], "red:3"),
             script={1: (A.BREAK_ACTION,)},
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("decide-breaker-own-turn", "decide",
             "a +3 Breaker in the bot's own turn: it draws 3",
             _at([["+3_breaker", "blue:1", "blue:4"], ["yellow:1", "yellow:4"]], "red:3"),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("decide-stop-two-players", "decide",
             "a Stop with two players: the bot plays again (D16)",
             _at([["red:stop", "blue:1", "blue:4"], ["yellow:1", "yellow:4"]], "red:3"),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
)

_REACT = (
    Scenario("react-holder", "react", "another seat's +3 while the bot holds a +3 Breaker",
             _at([["+3_breaker", "blue:1", "blue:4", "green:6"], ["+3", "yellow:1", "yellow:4"]],
                 "red:3", turn=1),
             script={1: (_play("+3"),)},
             asked=(Asked("react", "react", ("break", "pass"), exactly=True),)),
    Scenario("react-non-holder", "react", "another seat's +3 while the bot holds no Breaker",
             _at([["blue:1", "blue:4", "green:6"], ["+3", "yellow:1", "yellow:4"]], "red:3",
                 turn=1),
             script={1: (_play("+3"),)},
             asked=(Asked("react", "react", ("pass",), exactly=True),)),
    Scenario("react-own-plus3-pending", "react",
             "the next seat adds a +3 to the chain that holds the bot's own +3",
             _own_plus3_in_chain, script={1: (_play("+3"),)},
             asked=(Asked("react", "react", ("break", "pass"), exactly=True),)),
)

_LAST_CARD = (
    Scenario("last-card-two-cards", "last card", "the bot's turn ends with one card in hand",
             _at([["red:5", "blue:1"], ["yellow:1", "yellow:4"]], "red:3"),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("last-card-breaker", "last card",
             "breaking a +3 with the second-to-last card: declare with the break (D1)",
             _at([["+3_breaker", "blue:1"], ["+3", "yellow:1", "yellow:4"]], "red:3", turn=1),
             script={1: (_play("+3"),)},
             asked=(Asked("react", "react", ("break", "pass"), exactly=True),)),
    Scenario("last-card-crazy-hand", "last card",
             "a Crazy Card hands the bot a one-card hand at the end of its turn (D7)",
             _at([["crazy", "blue:1", "blue:4"], ["green:1", "green:4"], ["yellow:1"]], "red:3",
                 rules=_rules(crazy_card=True)),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("last-card-pyramid-stage-1", "last card",
             "the last card at Pyramid stage 2 deals one card for stage 1 (D6)",
             _at([["red:5"], ["yellow:1", "yellow:4"]], "red:3", rules=_rules(pyramid=True),
                 stages=(2, 8)),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("last-card-pyramid-break", "last card",
             "breaking a +3 with the last card at Pyramid stage 2: stage 1 deals one card"
             " (D1, D6)",
             _at([["+3_breaker"], ["+3", "yellow:1", "yellow:4"]], "red:3", turn=1,
                 rules=_rules(pyramid=True), stages=(2, 8)),
             script={1: (_play("+3"),)},
             asked=(Asked("react", "react", ("break", "pass"), exactly=True),)),
    Scenario("last-card-crazy-last", "last card",
             "a Crazy Card as the last card at Pyramid stage 3: the stage's two cards pass"
             " on, the one-card hand before comes in (D7)",
             _at([["crazy"], ["green:1", "green:4"], ["yellow:1"]], "red:3",
                 rules=_rules(crazy_card=True, pyramid=True), stages=(3, 8, 8)),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("last-card-crazy-forfeited", "last card",
             "a Crazy Card when the seat before has forfeited: the hand comes from the seat"
             " before that, still in the game (D7)",
             _forfeited(3, _at([["crazy", "blue:1", "blue:4"], ["green:1", "green:4", "green:5"],
                                ["yellow:1"], ["yellow:3", "yellow:4", "yellow:5"]], "red:3",
                               rules=_rules(crazy_card=True))),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("last-card-stop-two-players", "last card",
             "a Stop with two players leaves one card: declare with the Stop, since its"
             " turn ends before the bot plays again (D16)",
             _at([["red:stop", "red:5"], ["yellow:1", "yellow:4"]], "blue:stop"),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("last-card-change-direction-two-players", "last card",
             "a Change Direction with two players leaves one card: the other seat is"
             " next, so declare with it (R9)",
             _at([["red:change_direction", "red:5"], ["yellow:1", "yellow:4"]],
                 "blue:change_direction"),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("last-card-pyramid-king", "last card",
             "a King as the last card at Pyramid stage 2: no free action, stage 1 deals"
             " one card, declare with the King (R24, D6)",
             _at([["king"], ["yellow:1", "yellow:4"]], "red:3", rules=_rules(pyramid=True),
                 stages=(2, 8)),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("last-card-pyramid-breaker", "last card",
             "a +3 Breaker in the bot's own turn as the last card at Pyramid stage 2:"
             " stage 1 deals one card, then the Breaker draws 3 (D20)",
             _at([["+3_breaker"], ["yellow:1", "yellow:4"]], "red:3",
                 rules=_rules(pyramid=True), stages=(2, 8)),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("last-card-plus", "last card",
             "a Plus as the last card: it cannot finish, the draw leaves one card (R7)",
             _at([["red:plus"], ["yellow:1", "yellow:4"]], "red:3", draw_pile=["green:4"]),
             asked=(Asked("decide", "again", ("draw",), exactly=True),)),
)

_TIME = (
    Scenario("deadline-zero", "time",
             "an empty time bank: deadline_ms 0, answer at once (section 9)",
             _at([["red:5", "red:7", "blue:1"], ["yellow:1", "yellow:4"]], "red:3"),
             empty_bank=True, asked=(Asked("decide", "play", ("play",)),)),
    Scenario("bank-decide", "time",
             "a 60 s bank and a cap per move: keep to deadline_ms, not a share of"
             " time_left_ms (section 9)",
             _at([["red:5", "red:7", "blue:1"], ["yellow:1", "yellow:4"]], "red:3"),
             bank=True, asked=(Asked("decide", "play", ("play",)),)),
    Scenario("bank-react", "time",
             "a +3 Breaker window with a 60 s bank: the reaction has deadline_ms"
             " (reaction_ms), whatever time_left_ms says (section 9)",
             _at([["+3_breaker", "blue:1", "blue:4", "green:6"],
                  ["+3", "yellow:1", "yellow:4"]], "red:3", turn=1),
             script={1: (_play("+3"),)}, bank=True,
             asked=(Asked("react", "react", ("break", "pass"), exactly=True),)),
)

_TABLE = (
    Scenario("players-2", "table", "a whole two-player deal, the bot in seat 1",
             _deal(2, 2), seat=1, asked=(Asked("decide", "play"),)),
    Scenario("players-10", "table", "a ten-player deal, the bot in seat 7",
             _deal(10, 10, _rules(action_limit=150)), seat=7, asked=(Asked("decide", "play"),)),
    Scenario("react-ten-players", "table",
             "a +3 in a ten-player game: the bot is one of nine seats asked",
             _at([["blue:1", "blue:3"], ["green:1", "green:3"], ["+3", "yellow:1"],
                  ["green:4", "green:5"], ["blue:4", "blue:5"], ["yellow:3", "yellow:4"],
                  ["green:6", "green:7"], ["+3_breaker", "blue:6", "blue:7"],
                  ["yellow:5", "yellow:6"], ["green:8", "green:9"]], "red:3", turn=2),
             seat=7, script={2: (_play("+3"),)},
             asked=(Asked("react", "react", ("break", "pass"), exactly=True),)),
    Scenario("big-hand-draw", "table", "a +2 chain of 30 onto 40 cards: a 70-card hand",
             _at([_NO_ANSWERS, ["yellow:8", "yellow:9"]], "red:+2", pending=30),
             asked=(Asked("decide", "play", ("draw",), exactly=True),)),
    Scenario("big-hand-deal", "table", "a deal of 50 cards each",
             _deal(2, 50, _rules(hand_size=50)), asked=(Asked("decide", "play"),)),
)

_RULES = (
    Scenario("preset-super-taki-2018", "rules", "a three-player deal of the default preset",
             _deal(3, 2018), asked=(Asked("decide", "play"),)),
    Scenario("preset-super-taki-classic", "rules",
             "a three-player deal of the 112-card deck without +3 and Breaker",
             _deal(3, 112, _rules("super-taki-classic")), asked=(Asked("decide", "play"),)),
    Scenario("flag-hand-size", "rules", "hand_size 3", _deal(3, 3, _rules(hand_size=3)),
             asked=(Asked("decide", "play"),)),
    Scenario("flag-voluntary-draw", "rules", "voluntary_draw: a draw beside playable cards",
             _at([["red:5", "red:7", "blue:1"], ["yellow:1", "yellow:4"]], "red:3",
                 rules=_rules(voluntary_draw=True)),
             asked=(Asked("decide", "play", ("play", "draw"), exactly=True),)),
    Scenario("flag-crazy-card", "rules", "crazy_card: a Crazy Card passes every hand on",
             _at([["crazy", "blue:1", "blue:4"], ["green:1", "green:4", "green:5"],
                  ["yellow:1", "yellow:4", "yellow:5"]], "red:3", rules=_rules(crazy_card=True)),
             asked=(Asked("decide", "play", ("play",), exactly=True),)),
    Scenario("flag-plus3-rule", "rules", "plus3_rule: a 3 and a Plus played together",
             _at([["red:3", "red:plus", "blue:1"], ["yellow:1", "yellow:4"]], "red:5",
                 rules=_rules(plus3_rule=True)),
             asked=(Asked("decide", "play", ("play", "play_combo"), exactly=True),)),
    Scenario("flag-last-card-penalty", "rules", "last_card_penalty 0: no declaration needed",
             _deal(2, 4, _rules(last_card_penalty=0)), asked=(Asked("decide", "play"),)),
    Scenario("flag-action-limit", "rules", "action_limit 5: the game stops without a winner",
             _deal(2, 5, _rules(action_limit=5)), asked=(Asked("decide", "play"),)),
    Scenario("flag-pyramid", "rules", "pyramid: a Pyramid Tournament deal",
             _deal(3, 24, _rules(pyramid=True)), asked=(Asked("decide", "play"),)),
    Scenario("flag-scoring", "rules", "scoring: other point values",
             _deal(2, 22, _rules(scoring={"colored_action": 15, "colorless": 50})),
             asked=(Asked("decide", "play"),)),
)

#: Every game scenario, in the order they run.
SCENARIOS: tuple[Scenario, ...] = (*_DECIDE, *_REACT, *_LAST_CARD, *_TIME, *_TABLE, *_RULES)


def scenario_named(name: str) -> Scenario:
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    raise KeyError(name)
