"""Property tests of the rules core: random legal play over many seeds, player counts and
rule sets, checking after every action the invariants that every game must keep.

Hypothesis draws the game (seed, players, first seat, rule set) and the seed of a
``random.Random`` that makes every choice of the game: which legal action, whether to
declare "last card", when a seat forfeits. A failing example therefore replays exactly.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections import Counter
from typing import Any

import msgpack
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from taki_protocol import Decide

from referee.rules import GameOverError, GameState, IllegalActionError, Rules, new_game, view
from referee.rules import actions as A
from referee.rules import cards as C
from referee.rules.events import Drew
from referee.rules.phases import AGAIN, OVER, REACT, RUN

RULE_SETS: dict[str, Rules] = {
    "default": Rules(),
    "classic": Rules.preset("super-taki-classic"),
    "voluntary_draw": Rules.preset("super-taki-2018", voluntary_draw=True, action_limit=1_500),
    "crazy_card": Rules.preset("super-taki-2018", crazy_card=True),
    "plus3_rule": Rules.preset("super-taki-2018", plus3_rule=True),
    "pyramid": Rules.preset("super-taki-2018", pyramid=True, action_limit=1_500),
    "short_pyramid": Rules.preset("super-taki-2018", pyramid=True, hand_size=3),
    "small_limit": Rules.preset("super-taki-2018", action_limit=25),
    "everything": Rules.preset(
        "super-taki-classic",
        voluntary_draw=True,
        crazy_card=True,
        plus3_rule=True,
        last_card_penalty=2,
        action_limit=600,
        scoring={"colored_action": 15, "colorless": 50},
    ),
    "no_penalty_tiny_hands": Rules.preset(
        "super-taki-2018", last_card_penalty=0, hand_size=2, crazy_card=True
    ),
}


def _every_action() -> list[A.Action]:
    """Every action a seat could name: each play of each card code (with each color for
    the Change Color), the old-rule combos, run ends, the King's end of
    turn, the Breaker window's answers and draws of several sizes."""
    out: list[A.Action] = []
    for code in range(C.CARD_COUNT):
        if code == C.CHANGE_COLOR:
            out += [A.play(code, color=color) for color in range(4)]
        else:
            out.append(A.play(code))
    out += [A.combo(color) for color in range(4)]
    out += [
        A.END_TURN_ACTION,
        A.CLOSE_RUN_ACTION,
        A.LEAVE_RUN_OPEN_ACTION,
        A.BREAK_ACTION,
        A.PASS_ACTION,
    ]
    out += [A.draw(k) for k in (1, 2, 3, 4, 6, 8, 10)]
    return out


EVERY_ACTION = _every_action()
FORFEIT_REASONS = ("timeout", "crash", "protocol", "illegal_move")
#: Keys that would give away hidden information if a view had them.
SECRET_KEY_PARTS = ("seed", "rng", "random", "deck", "hands", "order", "pile_cards")


def frozen(state: GameState) -> tuple[Any, ...]:
    """A snapshot detached from the live state (``copy()`` owns fresh containers)."""
    return state.copy().snapshot()


# ------------------------------------------------------------------ invariants


def check_cards(state: GameState, deck: Counter[int]) -> None:
    """R1, R20, R23: no card is created or lost, wherever it moves."""
    assert state.card_count() == sum(deck.values())
    where: Counter[int] = Counter(state.draw_pile) + Counter(state.discard)
    for seat in range(state.players):
        hand = state.hands[seat]
        assert all(n > 0 for n in hand.values()), (seat, hand)
        assert sum(hand.values()) == state.sizes[seat], (seat, hand, state.sizes)
        for code, n in hand.items():
            assert n <= deck[code], f"seat {seat} holds {n} x {C.NAMES[code]}"
        where.update(hand)
        if not state.active[seat]:
            assert state.sizes[seat] == 0
    assert where == deck


def check_legal(state: GameState) -> None:
    """Who must act, and what they may do, is never empty and always possible."""
    if state.is_over:
        assert state.phase == OVER
        assert state.to_act() == ()
        for seat in range(state.players):
            assert state.legal_actions(seat) == []
        return
    seats = state.to_act()
    assert seats, "a running game waits for nobody"
    assert len(set(seats)) == len(seats)
    assert state.n_active >= 2
    for seat in seats:
        assert state.active[seat]
        legal = state.legal_actions(seat)
        assert legal, f"seat {seat} must act but has no legal action"
        assert len(set(legal)) == len(legal), legal
        hand = state.hands[seat]
        for action in legal:
            if action.kind == A.PLAY:
                assert action.card in hand, (action, state.hand(seat))
            elif action.kind == A.BREAK:
                assert C.BREAKER in hand
            elif action.kind == A.PLAY_COMBO:
                three = C.number(action.color, 3)
                plus = C.card(action.color, C.PLUS)
                assert three in hand and plus in hand
    for seat in range(state.players):
        if seat not in seats:
            assert state.legal_actions(seat) == []


def fingerprint(state: GameState) -> tuple[Any, ...]:
    """A cheap summary of the state, to spot a change between two full comparisons."""
    return (
        state.action_count,
        state.phase,
        state.turn,
        state.pending,
        state.declared,
        len(state.events),
        len(state.draw_pile),
        len(state.discard),
        tuple(state.sizes),
        tuple(state.reactors),
        tuple(state.breakers),
    )


def check_illegal_rejected(state: GameState, seat: int, rng: random.Random, thorough: bool) -> None:
    """R23: an action outside the legal list raises and leaves the state untouched."""
    legal = set(state.legal_actions(seat))
    candidates = [a for a in EVERY_ACTION if a not in legal]
    if state.pending:
        extra = (A.draw(state.pending), A.draw(state.pending + 2))
        candidates += [a for a in extra if a not in legal]
    if not thorough:
        candidates = rng.sample(candidates, min(3, len(candidates)))
    before = frozen(state)
    quick = fingerprint(state)
    for action in candidates:
        try:
            state.apply(action, seat, last_card=rng.random() < 0.5)
        except IllegalActionError:
            pass
        else:
            raise AssertionError(f"{action} was applied for seat {seat}; legal: {legal}")
        assert fingerprint(state) == quick, f"rejected {action} changed the state"
    # A legal action of another seat is illegal for a seat that is not to act.
    idle = [p for p in range(state.players) if p not in state.to_act()]
    if idle and legal:
        other = rng.choice(idle)
        action = rng.choice(sorted(legal, key=str))
        try:
            state.apply(action, other)
        except IllegalActionError:
            pass
        else:
            raise AssertionError(f"seat {other} was allowed to act out of turn")
    assert frozen(state) == before, "a rejected action changed the state"


def check_result(state: GameState) -> None:
    """R22, R23: a competition ranking; the winner first; forfeits last, earliest lowest."""
    result = state.result()
    n = state.players
    places = result.places
    assert len(places) == n and len(result.points) == n
    for seat in range(n):
        better = sum(1 for other in range(n) if places[other] < places[seat])
        assert places[seat] == better + 1, f"not a competition ranking: {places}"
    scoring = state.rules.scoring
    forfeit_order = [f[0] for f in state.forfeits]
    assert [f.seat for f in result.forfeits] == forfeit_order
    assert len(set(forfeit_order)) == len(forfeit_order)
    standing = [p for p in range(n) if state.active[p]]
    assert set(standing) | set(forfeit_order) == set(range(n))
    for seat in standing:
        expected = sum(scoring.points(code) * k for code, k in state.hands[seat].items())
        assert result.points[seat] == expected
    if result.winner is not None:
        assert state.is_over
        assert state.active[result.winner]
        assert places[result.winner] == 1
        assert [p for p in range(n) if places[p] == 1] == [result.winner]
        if result.reason == "win":
            assert state.sizes[result.winner] == 0
            if state.stages is not None:
                assert state.stages[result.winner] == 1
        else:
            assert result.reason == "last_standing"
            assert standing == [result.winner]
    else:
        assert result.reason in (None, "limit")
        assert (result.reason == "limit") == state.is_over

    def key(seat: int) -> tuple[int, int, int]:
        stage = state.stages[seat] if state.stages is not None else 0
        return (seat != result.winner, stage, result.points[seat])

    for a in standing:
        for b in standing:
            if key(a) < key(b):
                assert places[a] < places[b], (a, b, places)
            elif key(a) == key(b):
                assert places[a] == places[b], (a, b, places)
        assert all(places[a] < places[f] for f in forfeit_order)
    for earlier, later in itertools.pairwise(forfeit_order):
        assert places[earlier] > places[later], (forfeit_order, places)


def _walk_keys(value: Any, path: str = "") -> list[tuple[str, str]]:
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((path, str(k)))
            out += _walk_keys(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _walk_keys(v, f"{path}[{i}]")
    return out


def hide_differently(state: GameState, seat: int, rng: random.Random, since: int = 0) -> GameState:
    """A state that differs from ``state`` only in what ``seat`` cannot see: the other
    hands and the draw pile dealt anew from the same cards (every hand size kept), the
    cards of other seats' draws from event ``since`` on rewritten, the answers other seats
    gave in an unresolved +3 Breaker window, and another random generator."""
    other = state.copy()
    others = [p for p in range(state.players) if p != seat]
    pool = list(state.draw_pile)
    for p in others:
        pool += state.hand(p)
    rng.shuffle(pool)
    other.draw_pile = pool[: len(state.draw_pile)]
    i = len(state.draw_pile)
    for p in others:
        k = state.sizes[p]
        other.hands[p] = dict(Counter(pool[i : i + k]))
        i += k
    assert i == len(pool)
    deck = state.rules.deck_cards()
    other.events[since:] = [
        e._replace(cards=tuple(rng.choices(deck, k=e.number)))
        if isinstance(e, Drew) and e.seat != seat else e
        for e in state.events[since:]
    ]
    if state.phase == REACT:
        answered = [p for p in others if p != state.window_seat and p not in state.reactors]
        other.breakers = {p for p in answered if rng.random() < 0.5}
        other.react_declared = {p for p in other.breakers if rng.random() < 0.5}
        if seat in state.breakers:
            other.breakers.add(seat)
        if seat in state.react_declared:
            other.react_declared.add(seat)
    other.rng = random.Random(rng.getrandbits(64))
    return other


def check_view_private(
    state: GameState, seat: int, rng: random.Random, since: int | None = None
) -> None:
    """D12: a seat's view depends only on what it may know. Without ``since`` the view
    holds the latest events, as the referee sends them from move to move."""
    if since is None:
        since = max(0, len(state.events) - rng.choice((1, 10, 50, 200)))
    mine = view(state, seat, since)
    packed = msgpack.packb(mine)
    assert msgpack.unpackb(packed) == mine, "the view is not plain msgpack data"
    # The referee sends views and legal actions without the protocol's checks
    # (Decide.trusted): the checks, the walk of plain data included, must pass here.
    acting = state.to_act()
    legal = [a.to_wire() for a in state.legal_actions(acting[0])] if acting else []
    Decide(id=1, view=mine, legal=legal or [{"kind": "draw"}], deadline_ms=0)
    counts = state.hands[seat]
    assert state.hand(seat) == sorted(code for code in counts for _ in range(counts[code]))
    assert mine["hand"] == C.sorted_names(state.hand(seat))
    assert mine["hand_sizes"] == state.sizes
    assert isinstance(mine["draw_pile"], int)
    for path, key in _walk_keys(mine):
        low = key.lower()
        assert not any(part in low for part in SECRET_KEY_PARTS), f"view key {path}.{key}"
    for event in mine["events"]:
        if event["type"] == "draw":
            assert ("cards" in event) == (event["seat"] == seat), event
            if "cards" in event:
                assert len(event["cards"]) == event["count"]
    twin = hide_differently(state, seat, rng, since)
    assert twin.card_count() == state.card_count()
    assert msgpack.packb(view(twin, seat, since)) == packed


def check_react_order_free(state: GameState, rng: random.Random) -> None:
    """R17: the Breaker window's outcome does not depend on the order of the answers."""
    seats = list(state.to_act())
    answers = {p: (rng.choice(state.legal_actions(p)), rng.random() < 0.5) for p in seats}
    outcomes = []
    for order in (seats, seats[::-1], rng.sample(seats, len(seats))):
        game = state.copy()
        for p in order:
            action, declare = answers[p]
            game.apply(action, p, last_card=declare)
        game.breakers = sorted(game.breakers)  # which seats broke, not in what order
        outcomes.append(game.snapshot())
    assert outcomes[0] == outcomes[1] == outcomes[2]


# ------------------------------------------------------------------ playing


Log = list[tuple[Any, ...]]


def is_plus_play(action: A.Action) -> bool:
    return action.kind == A.PLAY and C.FIGURE_OF[action.card] == C.PLUS


def check_plus_left_the_turn(game: GameState, seat: int, stage_before: int | None) -> None:
    """R7, right after ``seat`` played a Plus of any color: the Plus won nothing (no win,
    no Pyramid stage passed), and if it left the hand empty the seat still holds the
    turn, to end its run or to draw the card it must take instead of playing again."""
    assert not (game.end_reason == "win" and game.winner == seat), "a Plus won the game"
    if game.stages is not None:
        assert game.stages[seat] == stage_before, "a Plus passed a Pyramid stage"
    if game.sizes[seat] == 0 and not game.is_over:
        assert game.turn == seat and game.phase in (AGAIN, RUN)
        if game.phase == AGAIN:
            assert game.legal_actions(seat) == [A.draw(1)]


def check_not_won_by_a_plus(game: GameState) -> None:
    """R7: the game never ends on a Plus. The winner's last card was anything but a Plus
    played as a card (a Plus that closes a run with an empty hand included; the old "+3
    rule" combination is a separate action, D8 and D17)."""
    if game.end_reason != "win":
        return
    last = next(e for e in reversed(game.events)
                if e[0] in ("play", "break", "play_combo") and e[1] == game.winner)
    assert not (last[0] == "play" and C.FIGURE_OF[last[2]] == C.PLUS), "won on a Plus"


def play_random_game(
    players: int,
    seed: int,
    rules: Rules,
    first_seat: int,
    driver: int,
    forfeit_rate: float,
    declare_rate: float,
    *,
    reject_rate: float = 0.0,
    view_rate: float = 0.0,
) -> tuple[GameState, Log]:
    """Play to the end, choosing at random among the legal actions and checking every
    state on the way. Returns the final state and the log of what was done."""
    rng = random.Random(driver)
    game = new_game(players, seed, rules, first_seat=first_seat)
    deck = Counter(rules.deck_cards())
    log: Log = []
    check_cards(game, deck)
    check_legal(game)
    steps = 0
    while not game.is_over:
        steps += 1
        # Forfeits and the actions limit are the only bounds: a game must end by then.
        assert steps <= rules.action_limit + players, "the game does not end"
        if forfeit_rate and rng.random() < forfeit_rate:
            seat = rng.choice([p for p in range(players) if game.active[p]])
            reason = rng.choice(FORFEIT_REASONS)
            game.forfeit(seat, reason, f"step {steps}")
            log.append(("forfeit", seat, reason, f"step {steps}"))
        else:
            if (
                game.phase == REACT
                and len(game.to_act()) > 1
                and game.action_count + len(game.to_act()) < rules.action_limit
                and rng.random() < 0.3
            ):
                check_react_order_free(game, rng)
            seat = rng.choice(game.to_act())
            legal = game.legal_actions(seat)
            if reject_rate and rng.random() < reject_rate:
                check_illegal_rejected(game, seat, rng, thorough=rng.random() < 0.1)
            action = rng.choice(legal)
            declare = rng.random() < declare_rate
            assert action in game.legal_actions(seat)
            if rng.random() < 0.05:
                # A copy is an independent game that goes the same way.
                twin = game.copy()
                twin.apply(action, seat, last_card=declare)
                expected = twin.snapshot()
            else:
                expected = None
            stage_before = None if game.stages is None else game.stages[seat]
            game.apply(action, seat, last_card=declare)
            log.append(("act", seat, action, declare))
            if is_plus_play(action):
                check_plus_left_the_turn(game, seat, stage_before)
            if expected is not None:
                assert game.snapshot() == expected
        check_cards(game, deck)
        check_legal(game)
        if view_rate and rng.random() < view_rate:
            check_view_private(game, rng.randrange(players), rng)
        if rng.random() < 0.02:
            check_result(game)
    assert game.action_count <= rules.action_limit
    check_not_won_by_a_plus(game)
    return game, log


def replay(players: int, seed: int, rules: Rules, first_seat: int, log: Log) -> GameState:
    game = new_game(players, seed, rules, first_seat=first_seat)
    for entry in log:
        if entry[0] == "forfeit":
            game.forfeit(entry[1], entry[2], entry[3])
        else:
            game.apply(entry[2], entry[1], last_card=entry[3])
    return game


games = st.fixed_dictionaries(
    {
        "players": st.integers(2, 10),
        "seed": st.integers(0, 2**32 - 1),
        "rules": st.sampled_from(sorted(RULE_SETS)),
        "first_seat": st.integers(0, 9),
        "driver": st.integers(0, 2**32 - 1),
        "forfeit_rate": st.sampled_from((0.0, 0.0, 0.002, 0.02)),
        "declare_rate": st.sampled_from((0.0, 0.5, 0.9)),
    }
)


def _args(params: dict[str, Any]) -> tuple[int, int, Rules, int, int, float, float]:
    players = params["players"]
    return (
        players,
        params["seed"],
        RULE_SETS[params["rules"]],
        params["first_seat"] % players,
        params["driver"],
        params["forfeit_rate"],
        params["declare_rate"],
    )


# ------------------------------------------------------------------ the tests


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_random_games_keep_every_invariant(params: dict[str, Any]) -> None:
    """Cards accounted for, only legal actions accepted, every game ends, and a finished
    game rejects everything."""
    game, _log = play_random_game(*_args(params), reject_rate=0.3)
    check_cards(game, Counter(game.rules.deck_cards()))
    check_legal(game)
    assert game.to_act() == ()
    assert game.end_reason in ("win", "last_standing", "limit")
    for action in (A.draw(1), A.PASS_ACTION, A.END_TURN_ACTION):
        try:
            game.apply(action, 0)
        except GameOverError:
            pass
        else:
            raise AssertionError("an action was applied to a finished game")
    try:
        game.forfeit(0, "timeout")
    except GameOverError:
        pass
    else:
        raise AssertionError("a seat forfeited a finished game")


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_same_seed_and_actions_give_the_same_game(params: dict[str, Any]) -> None:
    players, seed, rules, first_seat, *_ = _args(params)
    game, log = play_random_game(*_args(params))
    again = replay(players, seed, rules, first_seat, log)
    assert again.snapshot() == game.snapshot()
    assert again.result() == game.result()
    assert again.events == game.events


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_results_are_valid_rankings(params: dict[str, Any]) -> None:
    params = {**params, "forfeit_rate": max(params["forfeit_rate"], 0.01)}
    game, _log = play_random_game(*_args(params))
    check_result(game)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_views_reveal_nothing_hidden(params: dict[str, Any]) -> None:
    game, _log = play_random_game(*_args(params), view_rate=0.05)
    rng = random.Random(params["driver"] + 1)
    for seat in range(game.players):
        check_view_private(game, seat, rng, since=0 if seat < 2 else None)


def test_a_snapshot_stays_as_it_was_taken() -> None:
    """A snapshot is plain data: playing on must not change one taken before."""
    game = new_game(2, 1)
    snapshot = game.snapshot()
    kept = copy.deepcopy(snapshot)
    game.apply(game.legal_actions(0)[0], 0)
    assert snapshot == kept
