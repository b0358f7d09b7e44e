"""The protocol's messages, as immutable validated records.

Each class validates its fields when constructed (raising :class:`LocalProtocolError`),
converts itself to the wire map with :meth:`to_wire` (keys in the canonical order documented
in PROTOCOL.md, ``"type"`` first) and back with the :meth:`from_wire` class method (raising
:class:`RemoteProtocolError`). :func:`decode_message` dispatches on the ``"type"`` key.

The game data inside requests and results (``view``, ``legal``, ``events``, rule flags) is
kept as plain maps and arrays; its layout is defined by the rules engine and documented in
PROTOCOL.md.
"""

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, TypeAlias

import attrs

from . import _checks as check
from .constants import (
    FORFEIT_REASONS,
    MAX_ID_LEN,
    MAX_INT32,
    MAX_NAME_LEN,
    MAX_PLAYERS,
    MAX_TOKEN_LEN,
    MIN_INT32,
    MIN_PLAYERS,
    PROTOCOL_VERSION,
    ForfeitReason,
)
from .errors import LocalProtocolError, RemoteProtocolError

__all__ = [
    "MESSAGE_CLASSES",
    "Answer",
    "BotHello",
    "BotMessage",
    "Decide",
    "Error",
    "Forfeit",
    "GameOver",
    "GameRules",
    "GameStart",
    "Hello",
    "Message",
    "React",
    "RefereeMessage",
    "Request",
    "Shutdown",
    "Standing",
    "TimeLimits",
    "decode_message",
]

JsonMap: TypeAlias = dict[str, Any]
"""A wire map: string keys, plain values (nil, booleans, integers, strings, arrays, maps)."""


def _version(instance: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
    label = check.field_label(instance, attribute)
    if type(value) is not int:
        raise check.fail(label, f"must be an integer, got {check.wire_type_name(value)}")
    if value != PROTOCOL_VERSION:
        raise check.fail(
            label, f"is {value}, but only protocol version {PROTOCOL_VERSION} is supported"
        )


class _Record:
    """Shared wire conversion for the messages and the records nested in them.

    ``FIELDS`` lists the wire keys in canonical order; they equal the attribute names.
    ``OPTIONAL`` names the fields a sender may omit (the attribute's default applies).
    ``DECODERS`` converts the wire value of a field holding nested records; every such
    field must have one.
    """

    LABEL: ClassVar[str]
    FIELDS: ClassVar[tuple[str, ...]]
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()
    DECODERS: ClassVar[Mapping[str, Callable[[object], object]]] = {}

    def to_wire(self) -> JsonMap:
        """The wire map of this record, keys in canonical order. Only the fields that
        hold nested records (those with a decoder) need converting."""
        nested = self.DECODERS
        return {
            name: _encode_value(getattr(self, name)) if name in nested else getattr(self, name)
            for name in self.FIELDS
        }

    @classmethod
    def from_wire(cls, obj: object) -> Self:
        """Build a record from its wire map; unknown keys are ignored."""
        if not isinstance(obj, dict):
            raise RemoteProtocolError(f"{cls.LABEL} must be a map, got {check.wire_type_name(obj)}")
        kwargs: dict[str, object] = {}
        for name in cls.FIELDS:
            if name not in obj:
                if name in cls.OPTIONAL:
                    continue
                raise RemoteProtocolError(f"{cls.LABEL}: missing field {name!r}")
            decoder = cls.DECODERS.get(name)
            kwargs[name] = obj[name] if decoder is None else decoder(obj[name])
        try:
            return cls(**kwargs)
        except LocalProtocolError as exc:
            raise RemoteProtocolError(str(exc)) from None


class _Message(_Record):
    TYPE: ClassVar[str]

    def to_wire(self) -> JsonMap:
        wire: JsonMap = {"type": self.TYPE}
        wire.update(super().to_wire())
        return wire

    @classmethod
    def from_wire(cls, obj: object) -> Self:
        if isinstance(obj, dict) and obj.get("type") != cls.TYPE:
            raise RemoteProtocolError(
                f"expected a {cls.TYPE!r} message, got type {obj.get('type')!r}"
            )
        return super().from_wire(obj)


def _encode_value(value: object) -> object:
    if isinstance(value, _Record):
        return value.to_wire()
    if isinstance(value, list) and any(isinstance(item, _Record) for item in value):
        return [_encode_value(item) for item in value]
    return value


def _list_decoder(record: type[_Record], where: str) -> Callable[[object], object]:
    def decode(value: object) -> object:
        if not isinstance(value, list):
            raise RemoteProtocolError(
                f"{where} must be an array, got {check.wire_type_name(value)}"
            )
        return [record.from_wire(item) for item in value]

    return decode


# ---------------------------------------------------------------- nested records


@attrs.frozen(kw_only=True)
class GameRules(_Record):
    """The rule set of a game: a preset name and the values of the rule flags."""

    LABEL: ClassVar[str] = "game_start.rules"
    FIELDS: ClassVar[tuple[str, ...]] = ("preset", "flags")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"flags"})

    preset: str = attrs.field(validator=check.text(min_len=1, max_len=MAX_ID_LEN))
    flags: JsonMap = attrs.field(factory=dict, validator=check.plain_map())


@attrs.frozen(kw_only=True)
class TimeLimits(_Record):
    """The time control of a game, in milliseconds.

    ``move_ms`` caps every decision (None: no cap), ``bank_ms`` is the initial time bank
    (None: no bank) to which ``increment_ms`` is added after every decision answered in
    time, and ``reaction_ms`` is the time for a ``react``, never charged to the bank.
    """

    LABEL: ClassVar[str] = "game_start.time"
    FIELDS: ClassVar[tuple[str, ...]] = ("move_ms", "bank_ms", "increment_ms", "reaction_ms")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"move_ms", "bank_ms", "increment_ms"})

    move_ms: int | None = attrs.field(default=None, validator=check.optional_integer(1))
    bank_ms: int | None = attrs.field(default=None, validator=check.optional_integer(1))
    increment_ms: int = attrs.field(default=0, validator=check.integer(0))
    reaction_ms: int = attrs.field(validator=check.integer(1))

    def __attrs_post_init__(self) -> None:
        if self.move_ms is None and self.bank_ms is None:
            raise check.fail(self.LABEL, "needs move_ms, bank_ms or both")


@attrs.frozen(kw_only=True)
class Forfeit(_Record):
    """Why a seat lost by forfeit: a reason code and a human-readable detail."""

    LABEL: ClassVar[str] = "game_over.ranking.forfeit"
    FIELDS: ClassVar[tuple[str, ...]] = ("reason", "detail")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"detail"})

    reason: ForfeitReason = attrs.field(validator=check.text(choices=FORFEIT_REASONS))
    detail: str = attrs.field(default="", validator=check.text())


@attrs.frozen(kw_only=True)
class Standing(_Record):
    """One seat's result: its final place (1 = winner), points and forfeit if any."""

    LABEL: ClassVar[str] = "game_over.ranking"
    FIELDS: ClassVar[tuple[str, ...]] = ("seat", "place", "points", "forfeit")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"forfeit"})
    DECODERS: ClassVar[Mapping[str, Callable[[object], object]]] = {
        "forfeit": lambda value: None if value is None else Forfeit.from_wire(value),
    }

    seat: int = attrs.field(validator=check.integer(0, MAX_PLAYERS - 1))
    place: int = attrs.field(validator=check.integer(1, MAX_PLAYERS))
    points: int = attrs.field(validator=check.integer(MIN_INT32, MAX_INT32))
    forfeit: Forfeit | None = attrs.field(
        default=None, validator=attrs.validators.optional(check.instance_of(Forfeit))
    )


# ---------------------------------------------------------------- referee -> bot


@attrs.frozen(kw_only=True)
class Hello(_Message):
    """First message of a connection: the referee's protocol version and identification."""

    TYPE: ClassVar[str] = "hello"
    LABEL: ClassVar[str] = "hello"
    FIELDS: ClassVar[tuple[str, ...]] = ("protocol", "referee")

    protocol: int = attrs.field(default=PROTOCOL_VERSION, validator=_version)
    referee: str = attrs.field(validator=check.text(min_len=1, max_len=MAX_ID_LEN))


@attrs.frozen(kw_only=True)
class GameStart(_Message):
    """A new game begins; the bot plays ``seat`` among ``players`` seats."""

    TYPE: ClassVar[str] = "game_start"
    LABEL: ClassVar[str] = "game_start"
    FIELDS: ClassVar[tuple[str, ...]] = (
        "game_id",
        "seat",
        "players",
        "names",
        "rules",
        "time",
    )
    DECODERS: ClassVar[Mapping[str, Callable[[object], object]]] = {
        "rules": GameRules.from_wire,
        "time": TimeLimits.from_wire,
    }

    game_id: str = attrs.field(validator=check.text(min_len=1, max_len=MAX_ID_LEN))
    seat: int = attrs.field(validator=check.integer(0, MAX_PLAYERS - 1))
    players: int = attrs.field(validator=check.integer(MIN_PLAYERS, MAX_PLAYERS))
    names: list[str] = attrs.field(validator=check.list_of(str))
    rules: GameRules = attrs.field(validator=check.instance_of(GameRules))
    time: TimeLimits = attrs.field(validator=check.instance_of(TimeLimits))

    def __attrs_post_init__(self) -> None:
        if self.seat >= self.players:
            raise check.fail("game_start.seat", f"is {self.seat}, not below players")
        if len(self.names) != self.players:
            raise check.fail(
                "game_start.names", f"has {len(self.names)} names for {self.players} players"
            )
        for index, name in enumerate(self.names):
            check.require_text(f"game_start.names[{index}]", name, min_len=1, max_len=MAX_NAME_LEN)


@attrs.frozen(kw_only=True)
class _Request(_Message):
    """A request for an answer: the seat's view, the legal actions and the clock."""

    FIELDS: ClassVar[tuple[str, ...]] = ("id", "view", "legal", "time_left_ms", "deadline_ms")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"time_left_ms"})

    id: int = attrs.field(validator=check.integer(0))
    view: JsonMap = attrs.field(validator=check.plain_map())
    legal: list[JsonMap] = attrs.field(validator=check.list_of_maps(min_len=1, required_key="kind"))
    time_left_ms: int | None = attrs.field(default=None, validator=check.optional_integer(0))
    deadline_ms: int = attrs.field(validator=check.integer(0))

    @classmethod
    def trusted(
        cls, *, id: int, view: JsonMap, legal: list[JsonMap], time_left_ms: int | None,
        deadline_ms: int,
    ) -> Self:
        """The request, built without its checks from values that its sender vouches
        for: the referee's own, from its rules engine and its clock (tests/match checks
        that they pass the checks). They would cost the referee about 2 us of the 70
        it spends on a decision (benchmarks/ipc.py)."""
        request = object.__new__(cls)
        setattr_ = object.__setattr__  # the class is frozen
        setattr_(request, "id", id)
        setattr_(request, "view", view)
        setattr_(request, "legal", legal)
        setattr_(request, "time_left_ms", time_left_ms)
        setattr_(request, "deadline_ms", deadline_ms)
        return request

    def to_wire(self) -> JsonMap:
        # The same map as _Message.to_wire (no field holds records), spelled out: the
        # referee encodes one request per decision (benchmarks/ipc.py).
        return {"type": self.TYPE, "id": self.id, "view": self.view, "legal": self.legal,
                "time_left_ms": self.time_left_ms, "deadline_ms": self.deadline_ms}


@attrs.frozen(kw_only=True)
class Decide(_Request):
    """The bot's turn: choose one of ``legal`` (answer with its index)."""

    TYPE: ClassVar[str] = "decide"
    LABEL: ClassVar[str] = "decide"


_REACT_KINDS = (("break", "pass"), ("pass",))


@attrs.frozen(kw_only=True)
class React(_Request):
    """The +3 Breaker window: ``legal`` is ``[break, pass]`` or ``[pass]``."""

    TYPE: ClassVar[str] = "react"
    LABEL: ClassVar[str] = "react"

    def __attrs_post_init__(self) -> None:
        kinds = tuple(action["kind"] for action in self.legal)
        if kinds not in _REACT_KINDS:
            raise check.fail(
                "react.legal", f"must be [break, pass] or [pass], got kinds {list(kinds)}"
            )


@attrs.frozen(kw_only=True)
class GameOver(_Message):
    """The game ended: the final ranking and the public events since the last request."""

    TYPE: ClassVar[str] = "game_over"
    LABEL: ClassVar[str] = "game_over"
    FIELDS: ClassVar[tuple[str, ...]] = ("game_id", "ranking", "events")
    DECODERS: ClassVar[Mapping[str, Callable[[object], object]]] = {
        "ranking": _list_decoder(Standing, "game_over.ranking"),
    }

    game_id: str = attrs.field(validator=check.text(min_len=1, max_len=MAX_ID_LEN))
    ranking: list[Standing] = attrs.field(
        validator=check.list_of(Standing, min_len=1, max_len=MAX_PLAYERS)
    )
    events: list[JsonMap] = attrs.field(
        factory=list, validator=check.list_of_maps(required_key="type")
    )

    def __attrs_post_init__(self) -> None:
        seats = [standing.seat for standing in self.ranking]
        if len(set(seats)) != len(seats):
            raise check.fail("game_over.ranking", f"lists a seat twice: {seats}")


@attrs.frozen(kw_only=True)
class Error(_Message):
    """The bot is being forfeited (``reason``); the referee closes it right after."""

    TYPE: ClassVar[str] = "error"
    LABEL: ClassVar[str] = "error"
    FIELDS: ClassVar[tuple[str, ...]] = ("reason", "message")

    reason: ForfeitReason = attrs.field(validator=check.text(choices=FORFEIT_REASONS))
    message: str = attrs.field(default="", validator=check.text())


@attrs.frozen(kw_only=True)
class Shutdown(_Message):
    """No more games: the bot should exit."""

    TYPE: ClassVar[str] = "shutdown"
    LABEL: ClassVar[str] = "shutdown"
    FIELDS: ClassVar[tuple[str, ...]] = ()


# ---------------------------------------------------------------- bot -> referee


@attrs.frozen(kw_only=True)
class BotHello(_Message):
    """The bot's reply to ``hello``: its protocol version and name."""

    TYPE: ClassVar[str] = "bot_hello"
    LABEL: ClassVar[str] = "bot_hello"
    FIELDS: ClassVar[tuple[str, ...]] = ("protocol", "name", "token")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"token"})

    protocol: int = attrs.field(default=PROTOCOL_VERSION, validator=_version)
    name: str = attrs.field(validator=check.text(min_len=1, max_len=MAX_NAME_LEN))
    token: str | None = attrs.field(
        default=None, validator=check.optional_text(max_len=MAX_TOKEN_LEN)
    )


@attrs.frozen(kw_only=True)
class Answer(_Message):
    """The answer to request ``id``: the index of the chosen entry of its ``legal`` list."""

    TYPE: ClassVar[str] = "action"
    LABEL: ClassVar[str] = "action"
    FIELDS: ClassVar[tuple[str, ...]] = ("id", "choice", "last_card")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"last_card"})

    id: int = attrs.field(validator=check.integer(0))
    choice: int = attrs.field(validator=check.integer(0))
    last_card: bool = attrs.field(default=False, validator=check.boolean())

    @classmethod
    def from_wire(cls, obj: object) -> Self:
        # What _Record.from_wire does for a map with every field, without its loop:
        # the referee decodes one answer per decision (benchmarks/ipc.py). Anything
        # else takes the general way, with its errors.
        if type(obj) is dict and obj.get("type") == "action" and "id" in obj and "choice" in obj:
            try:
                return cls(id=obj["id"], choice=obj["choice"],
                           last_card=obj.get("last_card", False))
            except LocalProtocolError as exc:
                raise RemoteProtocolError(str(exc)) from None
        return super().from_wire(obj)


# ---------------------------------------------------------------- dispatch

RefereeMessage: TypeAlias = Hello | GameStart | Decide | React | GameOver | Error | Shutdown
BotMessage: TypeAlias = BotHello | Answer
Message: TypeAlias = RefereeMessage | BotMessage
Request: TypeAlias = Decide | React

MESSAGE_CLASSES: Mapping[str, type[Message]] = {
    cls.TYPE: cls
    for cls in (Hello, GameStart, Decide, React, GameOver, Error, Shutdown, BotHello, Answer)
}
"""Every message class, by its wire ``type``."""


def decode_message(obj: object) -> Message:
    """Build the message a decoded wire map describes.

    Raises :class:`RemoteProtocolError` when ``obj`` is not a map, has no string ``"type"``,
    names an unknown type, or has missing or invalid fields.
    """
    if not isinstance(obj, dict):
        raise RemoteProtocolError(f"a message must be a map, got {check.wire_type_name(obj)}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        if "type" not in obj:
            raise RemoteProtocolError("message has no 'type' key")
        raise RemoteProtocolError(
            f"message 'type' must be a string, got {check.wire_type_name(kind)}"
        )
    cls = MESSAGE_CLASSES.get(kind)
    if cls is None:
        raise RemoteProtocolError(f"unknown message type {kind!r}")
    return cls.from_wire(obj)
