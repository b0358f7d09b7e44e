"""Message classes: validation, wire form and round trips."""

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from taki_protocol import (
    FORFEIT_REASONS,
    MESSAGE_CLASSES,
    Answer,
    BotHello,
    Decide,
    Error,
    Forfeit,
    GameOver,
    GameRules,
    GameStart,
    Hello,
    LocalProtocolError,
    Message,
    React,
    RemoteProtocolError,
    Shutdown,
    Standing,
    TimeLimits,
    decode_message,
    pack_message,
    unpack_message,
)
from taki_protocol.messages import _Message

RULES = GameRules(preset="super-taki-2018", flags={"crazy_card": False})
TIME = TimeLimits(move_ms=1000, bank_ms=None, increment_ms=0, reaction_ms=500)
LEGAL = [{"kind": "draw", "count": 1}]


def game_start(**changes: Any) -> GameStart:
    fields: dict[str, Any] = {
        "game_id": "g",
        "seat": 1,
        "players": 3,
        "names": ["a", "b", "c"],
        "rules": RULES,
        "time": TIME,
    }
    fields.update(changes)
    return GameStart(**fields)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: Hello(referee=""), "hello.referee must not be empty"),
        (lambda: Hello(referee="r", protocol=2), "only protocol version 1"),
        (lambda: Hello(referee="r", protocol=True), "protocol must be an integer"),
        (lambda: BotHello(name="x" * 65), "longer than 64"),
        (lambda: BotHello(name="bot", token=5), "token must be a string"),
        (lambda: BotHello(name="\ud800"), "lone surrogate"),
        (lambda: game_start(seat=3), "seat is 3, not below players"),
        (lambda: game_start(players=1, seat=0, names=["a"]), "players must be between 2 and 10"),
        (lambda: game_start(names=["a", "b"]), "has 2 names for 3 players"),
        (lambda: game_start(names=["a", "", "c"]), r"names\[1\] must not be empty"),
        (lambda: game_start(names=("a", "b", "c")), "names must be an array"),
        (lambda: game_start(rules={"preset": "x"}), "rules must be GameRules"),
        (lambda: GameRules(preset="p", flags={"k": b"bytes"}), "rules.flags.k must be plain data"),
        (lambda: GameRules(preset="p", flags={1: True}), "key that is an integer"),
        (lambda: TimeLimits(reaction_ms=1), "needs move_ms, bank_ms or both"),
        (lambda: TimeLimits(move_ms=0, reaction_ms=1), "move_ms must be between 1"),
        (lambda: TimeLimits(move_ms=1, reaction_ms=1, increment_ms=-1), "increment_ms"),
        (lambda: Decide(id=-1, view={}, legal=LEGAL, deadline_ms=1), "decide.id must be between"),
        (lambda: Decide(id=2**31, view={}, legal=LEGAL, deadline_ms=1), "id must be between"),
        (lambda: Decide(id=1, view=[], legal=LEGAL, deadline_ms=1), "view must be a map"),
        (lambda: Decide(id=1, view={}, legal=[], deadline_ms=1), "at least 1 element"),
        (lambda: Decide(id=1, view={}, legal=[{}], deadline_ms=1), r"legal\[0\] has no 'kind'"),
        (lambda: Decide(id=1, view={}, legal=[5], deadline_ms=1), r"legal\[0\] must be a map"),
        (lambda: Decide(id=1, view={}, legal=LEGAL, deadline_ms=-5), "deadline_ms must be"),
        (
            lambda: Decide(id=1, view={"x": 1.5}, legal=LEGAL, deadline_ms=1),
            "view.x must be plain data, got a float",
        ),
        (
            lambda: Decide(id=1, view={"x": (1, 2)}, legal=LEGAL, deadline_ms=1),
            "got a Python tuple",
        ),
        (
            lambda: Decide(id=1, view={"x": 2**64}, legal=LEGAL, deadline_ms=1),
            "outside the 64-bit range",
        ),
        (
            lambda: Decide(id=1, view={"x": _nested(40)}, legal=LEGAL, deadline_ms=1),
            "nested deeper than 32",
        ),
        (
            lambda: React(
                id=1, view={}, legal=[{"kind": "pass"}, {"kind": "break"}], deadline_ms=1
            ),
            r"must be \[break, pass\] or \[pass\]",
        ),
        (
            lambda: React(id=1, view={}, legal=[{"kind": "draw", "count": 1}], deadline_ms=1),
            "got kinds",
        ),
        (lambda: Answer(id=1, choice=-1), "action.choice must be between 0"),
        (lambda: Answer(id=1, choice=0, last_card=1), "last_card must be a boolean"),
        (lambda: Error(reason="boredom"), "error.reason must be one of"),
        (lambda: Forfeit(reason="late"), "forfeit.reason must be one of"),
        (lambda: Standing(seat=0, place=0, points=0), "place must be between 1"),
        (
            lambda: GameOver(
                game_id="g",
                ranking=[Standing(seat=0, place=1, points=0), Standing(seat=0, place=2, points=1)],
            ),
            "lists a seat twice",
        ),
        (lambda: GameOver(game_id="g", ranking=[]), "between 1 and 10 elements"),
        (lambda: GameOver(game_id="g", ranking=[{"seat": 0}]), r"ranking\[0\] must be Standing"),
        (
            lambda: GameOver(
                game_id="g", ranking=[Standing(seat=0, place=1, points=0)], events=[{"seat": 1}]
            ),
            r"events\[0\] has no 'type' key",
        ),
    ],
)
def test_constructors_validate(build: Any, match: str) -> None:
    with pytest.raises(LocalProtocolError, match=match):
        build()


def _nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def test_valid_edge_values() -> None:
    Decide(id=0, view={}, legal=LEGAL, time_left_ms=0, deadline_ms=0)
    Decide(id=2**31 - 1, view={"n": -(2**63), "m": 2**64 - 1}, legal=LEGAL, deadline_ms=1)
    React(id=3, view={}, legal=[{"kind": "pass"}], deadline_ms=1)
    TimeLimits(bank_ms=1, reaction_ms=1)
    Standing(seat=9, place=10, points=-(2**31))


# ---------------------------------------------------------------- wire form


def test_wire_keys_are_in_canonical_order() -> None:
    for cls in MESSAGE_CLASSES.values():
        assert tuple(a.name for a in cls.__attrs_attrs__) == cls.FIELDS
    answer = Answer(id=4, choice=2)
    assert list(answer.to_wire().items()) == [
        ("type", "action"),
        ("id", 4),
        ("choice", 2),
        ("last_card", False),
    ]
    assert list(game_start().to_wire()) == [
        "type",
        "game_id",
        "seat",
        "players",
        "names",
        "rules",
        "time",
    ]
    assert list(game_start().to_wire()["time"]) == [
        "move_ms",
        "bank_ms",
        "increment_ms",
        "reaction_ms",
    ]
    standing = Standing(seat=0, place=2, points=5, forfeit=Forfeit(reason="illegal", detail="d"))
    assert standing.to_wire() == {
        "seat": 0,
        "place": 2,
        "points": 5,
        "forfeit": {"reason": "illegal", "detail": "d"},
    }
    assert Shutdown().to_wire() == {"type": "shutdown"}


def test_optional_fields_have_defaults() -> None:
    records = [*MESSAGE_CLASSES.values(), GameRules, TimeLimits, Forfeit, Standing]
    for cls in records:
        defaults = {a.name for a in cls.__attrs_attrs__ if a.default is not attrs.NOTHING}
        assert defaults >= cls.OPTIONAL, cls


def test_required_fields_with_a_python_default() -> None:
    with pytest.raises(RemoteProtocolError, match="missing field 'protocol'"):
        decode_message({"type": "hello", "referee": "r"})
    with pytest.raises(RemoteProtocolError, match="missing field 'events'"):
        decode_message({"type": "game_over", "game_id": "g", "ranking": []})


def test_optional_fields_may_be_omitted() -> None:
    assert decode_message({"type": "bot_hello", "protocol": 1, "name": "b"}) == BotHello(name="b")
    assert decode_message({"type": "action", "id": 1, "choice": 2}) == Answer(id=1, choice=2)
    decide = decode_message(
        {"type": "decide", "id": 1, "view": {}, "legal": LEGAL, "deadline_ms": 10}
    )
    assert isinstance(decide, Decide)
    assert decide.time_left_ms is None
    time = TimeLimits.from_wire({"move_ms": 5, "reaction_ms": 5})
    assert time == TimeLimits(move_ms=5, bank_ms=None, increment_ms=0, reaction_ms=5)


@pytest.mark.parametrize(
    ("obj", "match"),
    [
        ([1, 2], "a message must be a map, got an array"),
        ({}, "no 'type' key"),
        ({"type": None}, "'type' must be a string, got nil"),
        ({"type": "nope"}, "unknown message type 'nope'"),
        ({"type": "game_start"}, "game_start: missing field 'game_id'"),
        (
            {
                "type": "game_start",
                "game_id": "g",
                "seat": 0,
                "players": 2,
                "names": ["a", "b"],
                "rules": "official",
                "time": {"move_ms": 1, "reaction_ms": 1},
            },
            "game_start.rules must be a map, got a string",
        ),
        (
            {"type": "game_over", "game_id": "g", "ranking": {}, "events": []},
            "game_over.ranking must be an array, got a map",
        ),
        (
            {"type": "game_over", "game_id": "g", "ranking": [{"seat": 0, "place": 1}]},
            "game_over.ranking: missing field 'points'",
        ),
        (
            {
                "type": "game_over",
                "game_id": "g",
                "ranking": [{"seat": 0, "place": 1, "points": 0, "forfeit": "crash"}],
            },
            "forfeit must be a map",
        ),
    ],
)
def test_decode_errors_are_remote(obj: object, match: str) -> None:
    with pytest.raises(RemoteProtocolError, match=match):
        decode_message(obj)


def test_from_wire_checks_the_type() -> None:
    with pytest.raises(RemoteProtocolError, match="expected a 'decide' message, got type 'react'"):
        Decide.from_wire({"type": "react"})


# ---------------------------------------------------------------- round trips

names = st.text(min_size=1, max_size=64)
ids = st.integers(min_value=0, max_value=2**31 - 1)
ms = st.integers(min_value=0, max_value=2**31 - 1)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.text(max_size=20)
)
plain = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
plain_maps = st.dictionaries(st.text(max_size=8), plain, max_size=6)
actions = st.builds(
    lambda kind, extra: {**extra, "kind": kind},  # extra may hold a "kind" key too
    st.sampled_from(["play", "draw", "end_turn", "close_run", "leave_run_open"]),
    plain_maps,
)
times = st.builds(
    TimeLimits,
    move_ms=st.integers(min_value=1, max_value=10**6),
    bank_ms=st.none() | st.integers(min_value=1, max_value=10**7),
    increment_ms=st.integers(min_value=0, max_value=10**4),
    reaction_ms=st.integers(min_value=1, max_value=10**6),
)


@st.composite
def game_starts(draw: st.DrawFn) -> GameStart:
    players = draw(st.integers(min_value=2, max_value=10))
    return GameStart(
        game_id=draw(st.text(min_size=1, max_size=128)),
        seat=draw(st.integers(min_value=0, max_value=players - 1)),
        players=players,
        names=draw(st.lists(names, min_size=players, max_size=players)),
        rules=GameRules(preset=draw(st.text(min_size=1, max_size=30)), flags=draw(plain_maps)),
        time=draw(times),
    )


@st.composite
def game_overs(draw: st.DrawFn) -> GameOver:
    seats = draw(st.lists(st.integers(0, 9), min_size=1, max_size=10, unique=True))
    forfeits = st.none() | st.builds(
        Forfeit, reason=st.sampled_from(FORFEIT_REASONS), detail=st.text(max_size=40)
    )
    ranking = [
        Standing(
            seat=seat,
            place=draw(st.integers(1, 10)),
            points=draw(st.integers(-(2**31), 2**31 - 1)),
            forfeit=draw(forfeits),
        )
        for seat in seats
    ]
    events = draw(
        st.lists(st.builds(lambda t, m: {**m, "type": t}, st.text(min_size=1), plain_maps))
    )
    return GameOver(game_id=draw(st.text(min_size=1, max_size=128)), ranking=ranking, events=events)


requests: st.SearchStrategy[Decide | React] = st.one_of(
    st.builds(
        Decide,
        id=ids,
        view=plain_maps,
        legal=st.lists(actions, min_size=1, max_size=8),
        time_left_ms=st.none() | ms,
        deadline_ms=ms,
    ),
    st.builds(
        React,
        id=ids,
        view=plain_maps,
        legal=st.sampled_from([[{"kind": "break"}, {"kind": "pass"}], [{"kind": "pass"}]]),
        time_left_ms=st.none() | ms,
        deadline_ms=ms,
    ),
)

messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(Hello, referee=st.text(min_size=1, max_size=128)),
    st.builds(BotHello, name=names, token=st.none() | st.text(max_size=100)),
    game_starts(),
    requests,
    game_overs(),
    st.builds(Error, reason=st.sampled_from(FORFEIT_REASONS), message=st.text(max_size=100)),
    st.just(Shutdown()),
    st.builds(Answer, id=ids, choice=ids, last_card=st.booleans()),
)


@given(messages)
def test_round_trip_through_the_wire_map(message: Message) -> None:
    assert decode_message(message.to_wire()) == message


@given(messages)
def test_every_message_has_the_wire_map_of_its_fields(message: Message) -> None:
    # Requests spell their map out (the referee encodes one per decision): it must stay
    # the map every other message gets from its FIELDS.
    generic = _Message.to_wire(message)
    wire = message.to_wire()
    assert list(wire.items()) == list(generic.items())


@given(messages)
def test_round_trip_through_bytes(message: Message) -> None:
    data = pack_message(message)
    decoded = unpack_message(data)
    assert decoded == message
    assert pack_message(decoded) == data


@given(requests)
def test_a_trusted_request_is_the_checked_one(message: Decide | React) -> None:
    fields = {name: getattr(message, name) for name in message.FIELDS}
    trusted = type(message).trusted(**fields)
    assert trusted == message
    assert type(trusted) is type(message)
    assert pack_message(trusted) == pack_message(message)
