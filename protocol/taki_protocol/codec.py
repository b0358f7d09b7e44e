"""A sans-I/O codec for the protocol's byte stream.

:class:`Codec` does no I/O: the caller hands it the bytes it read (``receive_data``), pulls
decoded messages out (``next_message``) and writes the bytes ``send`` returns. The same
class serves both ends: with ``role="referee"`` it decodes bot messages and encodes referee
messages, with ``role="bot"`` the reverse.

Besides framing and schemas, the codec follows the conversation and rejects messages that
are not allowed at their point of it (see PROTOCOL.md, "Lifecycle"): the hello handshake
comes first, requests only happen inside a game, request ids increase, at most one request
is open at a time, an answer must carry the open request's id, and nothing follows
``error`` or ``shutdown``. A referee that gives up on an answer calls
:meth:`Codec.abandon_request`; the late answer is then dropped when it arrives.

Errors: what the peer sent wrong raises :class:`RemoteProtocolError`, what this side tried
to send wrong :class:`LocalProtocolError`. A message over the size limit
(``max_message_size``, :data:`MAX_MESSAGE_SIZE` by default) raises
:class:`MessageTooLargeError` in either direction: :class:`ReceivedMessageTooLargeError`
(a :class:`RemoteProtocolError`) for one received, refused as soon as a header shows it
cannot fit, and :class:`SentMessageTooLargeError` (a :class:`LocalProtocolError`) for one
this side tried to send.
"""

import enum
import re
from collections.abc import Callable
from typing import Final, Literal, TypeAlias

import msgpack  # type: ignore[import-untyped]

from ._framing import FrameBuffer, FrameScanner
from .constants import MAX_BOT_MESSAGE_SIZE, MAX_CONTAINER_LEN, MAX_MESSAGE_SIZE
from .errors import (
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    RepeatedAnswerError,
    SentMessageTooLargeError,
)
from .messages import (
    MESSAGE_CLASSES,
    Answer,
    BotHello,
    Decide,
    Error,
    GameOver,
    GameStart,
    Hello,
    Message,
    React,
    Shutdown,
    decode_message,
)

__all__ = ["EOF", "NEED_DATA", "Codec", "Role", "Sentinel", "pack_message", "unpack_message"]

Role: TypeAlias = Literal["referee", "bot"]


class Sentinel(enum.Enum):
    """Values :meth:`Codec.next_message` returns when it has no message to give."""

    NEED_DATA = "NEED_DATA"
    EOF = "EOF"

    def __repr__(self) -> str:
        return self.value

    __str__ = __repr__


NEED_DATA: Final = Sentinel.NEED_DATA
"""No complete message is buffered: read more bytes and call ``receive_data``."""

EOF: Final = Sentinel.EOF
"""The peer closed the stream cleanly, between two messages."""

_REFEREE_MESSAGES = (Hello, GameStart, Decide, React, GameOver, Error, Shutdown)
_BOT_MESSAGES = (BotHello, Answer)


def pack_message(message: Message, *, max_size: int = MAX_MESSAGE_SIZE) -> bytes:
    """Encode one message canonically: a msgpack map with keys in the documented order.

    Raises :class:`SentMessageTooLargeError` (a :class:`LocalProtocolError` and a
    :class:`MessageTooLargeError`) if the encoding exceeds ``max_size`` bytes.
    """
    return _pack(message, max_size, msgpack.Packer(use_bin_type=True).pack)


def _pack(message: Message, max_size: int, pack: Callable[[object], bytes]) -> bytes:
    try:
        data = pack(message.to_wire())
    except (TypeError, ValueError, OverflowError) as exc:  # only if fields were mutated
        raise LocalProtocolError(f"cannot encode {message.TYPE!r} message: {exc}") from None
    if len(data) > max_size:
        raise SentMessageTooLargeError(
            f"{message.TYPE} message is {len(data)} bytes, over the maximum of {max_size}",
            limit=max_size,
            size=len(data),
        )
    return data


def _unpackb(data: bytes | bytearray) -> object:
    """msgpack's decoding of the first value of ``data`` under the protocol's limits."""
    return msgpack.unpackb(
        data,
        raw=False,
        strict_map_key=True,
        max_str_len=len(data),
        max_bin_len=0,
        max_ext_len=0,
        max_array_len=MAX_CONTAINER_LEN,
        max_map_len=MAX_CONTAINER_LEN,
    )


def _unpack_frame(frame: bytes) -> object:
    try:
        return _unpackb(frame)
    except UnicodeDecodeError as exc:
        raise RemoteProtocolError(f"message contains a string that is not UTF-8: {exc}") from None
    except msgpack.StackError:
        raise RemoteProtocolError("message is nested too deeply") from None
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        if "map key" in str(exc):
            raise RemoteProtocolError("message has a map key that is not a string") from None
        detail = str(exc) or type(exc).__name__
        raise RemoteProtocolError(f"message is not valid msgpack: {detail}") from None


#: The longest read decoded at once: an answer takes about 30 bytes, and the containers
#: msgpack makes room for in 256 bytes (nested as deep as they go) take under 64 KiB.
_AT_ONCE_BYTES = 256

# Bytes that start a format the framing refuses (0xc1, bin, ext) or a container with a
# 16- or 32-bit length (0xdc-0xdf), wherever they are.
_NOT_AT_ONCE = re.compile(b"[\\xc1\\xc4-\\xc9\\xd4-\\xd8\\xdc-\\xdf]")


def _unpack_at_once(buffer: bytearray) -> tuple[dict[object, object], int] | None:
    """The first message of ``buffer`` and its length, when msgpack decodes one at once
    under the protocol's limits and it is a map; None otherwise (the message is not
    complete or breaks a rule, or the buffer holds a byte that may start a refused
    format or a long container), and the frame scanner then measures it and reports
    any error as usual.

    A shortcut for the usual case, a whole small message in one read: the scanner's
    walk in Python costs the referee more than the decoding itself (benchmarks/ipc.py).
    It takes only what the scanner takes: a map within the size limit (``buffer`` is
    no longer than one message may be) and none of the refused formats (no byte of the
    buffer can start one, not even inside a string). Only containers of at most 15
    elements, in at most :data:`_AT_ONCE_BYTES`: msgpack makes room for a container's
    elements when it reads its header, so a header that declares thousands would cost
    memory before the bytes that fill it came (the scanner refuses those first), and
    even small ones nested as deep as msgpack goes would cost about 180 KiB in 4 KiB."""
    if _NOT_AT_ONCE.search(buffer):
        return None
    try:
        obj = _unpackb(buffer)
        size = len(buffer)
    except msgpack.ExtraData as extra:
        obj, size = extra.unpacked, len(buffer) - len(extra.extra)
    except Exception:  # incomplete, or an error the slow way names
        return None
    return (obj, size) if type(obj) is dict else None


def unpack_message(data: bytes, *, max_size: int = MAX_MESSAGE_SIZE) -> Message:
    """Decode exactly one complete encoded message, outside of any conversation.

    Raises :class:`RemoteProtocolError` for anything but one valid message (its subclass
    :class:`ReceivedMessageTooLargeError` for one over ``max_size`` bytes).
    """
    length = FrameScanner(max_size, MAX_CONTAINER_LEN).scan(data)
    if length is None:
        raise RemoteProtocolError("incomplete message")
    if length != len(data):
        raise RemoteProtocolError(f"{len(data) - length} bytes follow the message")
    return decode_message(_unpack_frame(data))


class Codec:
    """Both directions of one referee-bot connection, for the side given by ``role``."""

    def __init__(
        self,
        role: Role,
        *,
        max_message_size: int = MAX_MESSAGE_SIZE,
        max_received_size: int | None = None,
    ) -> None:
        """``max_message_size`` bounds what is sent; ``max_received_size`` what is
        received, by default :data:`MAX_BOT_MESSAGE_SIZE` on the referee's side (a bot's
        messages are small) and ``max_message_size`` on the bot's."""
        if role not in ("referee", "bot"):
            raise ValueError(f"role must be 'referee' or 'bot', not {role!r}")
        if max_received_size is None:
            max_received_size = (
                min(MAX_BOT_MESSAGE_SIZE, max_message_size) if role == "referee"
                else max_message_size
            )
        self._role: Role = role
        self._peer: Role = "bot" if role == "referee" else "referee"
        self._incoming = _BOT_MESSAGES if role == "referee" else _REFEREE_MESSAGES
        self._max_size = max_message_size
        self._frames = FrameBuffer(max_received_size, MAX_CONTAINER_LEN)
        self._packer = msgpack.Packer(use_bin_type=True)
        self._eof = False
        self._failure: RemoteProtocolError | None = None
        # The conversation, identical on both sides.
        self._hello = False
        self._bot_hello = False
        self._game_id: str | None = None
        self._open_id: int | None = None
        self._last_id = -1  # request ids increase strictly over the connection
        self._abandoned: set[int] = set()  # requests given up on, whose answers are dropped
        self._answered = -1  # the last request answered
        self._final: str | None = None  # "error" or "shutdown" once one was exchanged

    # ------------------------------------------------------------ state

    @property
    def role(self) -> Role:
        return self._role

    @property
    def game_id(self) -> str | None:
        """The id of the game in progress, None between games."""
        return self._game_id

    @property
    def open_request(self) -> int | None:
        """The id of the request awaiting an answer, if any."""
        return self._open_id

    @property
    def finished(self) -> bool:
        """True once ``error`` or ``shutdown`` was exchanged: no message may follow."""
        return self._final is not None

    @property
    def buffered(self) -> bool:
        """True when bytes received wait to be decoded, or the end of the stream was
        received: :meth:`next_message` has something to say other than
        :data:`NEED_DATA`."""
        return self._eof or bool(self._frames)

    @property
    def failed(self) -> bool:
        """True once the peer broke the protocol; the codec then refuses input."""
        return self._failure is not None

    # ------------------------------------------------------------ receiving

    def receive_data(self, data: bytes) -> None:
        """Add bytes read from the peer; ``b""`` means the peer closed its end."""
        if self._failure is not None:
            raise self._refusal()
        if not data:
            self._eof = True
            return
        if self._eof:
            raise LocalProtocolError("receive_data() called with data after EOF")
        self._frames.feed(data)

    def next_message(self) -> Message | Sentinel:
        """Return the next complete message, :data:`NEED_DATA` or :data:`EOF`.

        Raises :class:`RemoteProtocolError` when the peer broke the protocol, including
        when the stream ends in the middle of a message; every later call raises again. A
        message over the size limit raises its subclass
        :class:`ReceivedMessageTooLargeError` (a :class:`MessageTooLargeError`) as soon as
        a header shows it cannot fit, before its contents arrive.
        """
        if self._failure is not None:
            raise self._refusal()
        try:
            return self._next_message()
        except RemoteProtocolError as exc:
            self._failure = exc
            raise

    def _next_message(self) -> Message | Sentinel:
        # The referee asks before and after every read; most of the time nothing waits
        # (benchmarks/ipc.py).
        if not self.buffered:
            return NEED_DATA
        while True:
            whole = self._frames.unmeasured(_AT_ONCE_BYTES)
            quick = None if whole is None else _unpack_at_once(whole)
            if quick is not None:
                obj: object = quick[0]
                self._frames.drop(quick[1])
            elif (frame := self._frames.next_frame()) is not None:
                obj = _unpack_frame(frame)
            else:
                if not self._eof:
                    return NEED_DATA
                if self._frames:
                    raise RemoteProtocolError(
                        f"stream closed in the middle of a message ({len(self._frames)}"
                        " bytes received)"
                    )
                return EOF
            kind = obj.get("type") if isinstance(obj, dict) else None
            cls = MESSAGE_CLASSES.get(kind) if isinstance(kind, str) else None
            if cls is not None and cls not in self._incoming:
                raise RemoteProtocolError(f"the {self._peer} may not send {kind!r} messages")
            message = decode_message(obj) if cls is None else cls.from_wire(obj)
            if isinstance(message, Answer) and message.id in self._abandoned:
                self._abandoned.discard(message.id)  # a late answer: drop it
                continue
            self._advance(message, incoming=True)
            return message

    def _refusal(self) -> RemoteProtocolError:
        return RemoteProtocolError(
            f"input refused after an earlier protocol error: {self._failure}"
        )

    # ------------------------------------------------------------ sending

    def send(self, message: Message) -> bytes:
        """Return the bytes to write for ``message``.

        Raises :class:`LocalProtocolError`, leaving the codec unchanged, when this role may
        not send the message or may not send it now, and its subclass
        :class:`SentMessageTooLargeError` (a :class:`MessageTooLargeError`) when the
        message is over the size limit.
        """
        data = _pack(message, self._max_size, self._packer.pack)
        self._advance(message, incoming=False)  # checks everything before it records
        return data

    def abandon_request(self) -> None:
        """Stop waiting for the open request, if any (referee side only).

        The referee calls this when it gives up on an answer (its deadline passed) but
        keeps the bot: it may then send the next request or ``game_over``. The abandoned
        request's answer, if it still arrives, is dropped by :meth:`next_message`.
        """
        if self._role != "referee":
            raise LocalProtocolError("only the referee abandons requests")
        if self._open_id is not None:
            self._abandoned.add(self._open_id)
            self._open_id = None

    # ------------------------------------------------------------ conversation

    def _advance(self, message: Message, *, incoming: bool) -> None:
        """Check that ``message`` may be exchanged now and record that it was. Every check
        comes before anything is recorded: a refused message leaves the codec unchanged."""
        error: type[ProtocolError] = RemoteProtocolError if incoming else LocalProtocolError
        sender = self._peer if incoming else self._role
        allowed = _REFEREE_MESSAGES if sender == "referee" else _BOT_MESSAGES
        if not isinstance(message, allowed):
            raise error(f"the {sender} may not send {message.TYPE!r} messages")
        if self._final is not None:
            raise error(f"{message.TYPE!r} message after {self._final!r} ended the conversation")
        if sender == "bot" and not self._bot_hello and not isinstance(message, BotHello):
            raise error(f"the bot's first message must be 'bot_hello', not {message.TYPE!r}")

        # The cases are disjoint classes: answers and requests, the messages of every
        # decision, come first (benchmarks/ipc.py).
        match message:
            case Answer():
                self._answer(message.id, error)
            case Decide() | React():
                self._request(message.id, message.TYPE, error)
            case Hello() | BotHello():
                self._handshake(message.TYPE, error)
            case GameStart():
                if not (self._hello and self._bot_hello):
                    raise error("'game_start' before the hello handshake completed")
                if self._game_id is not None:
                    raise error(f"'game_start' while game {self._game_id!r} is in progress")
                self._game_id = message.game_id
            case GameOver():
                self._game_over(message.game_id, error)
            case Error() | Shutdown():
                self._final = message.TYPE

    def _answer(self, request_id: int, error: type[ProtocolError]) -> None:
        if request_id == self._open_id:
            self._open_id = None
            self._answered = request_id
        elif request_id in self._abandoned:  # a bot answering a superseded request
            self._abandoned.discard(request_id)
            self._answered = request_id
        elif request_id == self._answered:
            repeated = RepeatedAnswerError if error is RemoteProtocolError else error
            open_now = "no request is open" if self._open_id is None \
                else f"the open request is {self._open_id}"
            raise repeated(f"a second answer for request {request_id} ({open_now}):"
                           " each request takes exactly one answer")
        elif self._open_id is None:
            raise error(f"answer for request {request_id}, but no request is open")
        else:
            raise error(
                f"answer for request {request_id}, but the open request is {self._open_id}"
            )

    def _request(self, request_id: int, kind: str, error: type[ProtocolError]) -> None:
        if self._game_id is None:
            raise error(f"{kind!r} outside of a game")
        if request_id <= self._last_id:
            raise error(
                f"{kind!r} id {request_id} is not above the previous request id {self._last_id}"
            )
        # A bot may see a new request before it answered the previous one: the referee
        # gave up on that one. The referee must say so explicitly.
        superseded = self._superseded(error, kind)
        if superseded is not None:
            self._abandoned.add(superseded)
        self._open_id = self._last_id = request_id

    def _handshake(self, kind: str, error: type[ProtocolError]) -> None:
        if kind == Hello.TYPE:
            if self._hello:
                raise error("duplicate 'hello'")
            self._hello = True
        else:
            if self._bot_hello:
                raise error("duplicate 'bot_hello'")
            self._bot_hello = True

    def _game_over(self, game_id: str, error: type[ProtocolError]) -> None:
        if self._game_id is None:
            raise error("'game_over' outside of a game")
        if game_id != self._game_id:
            raise error(
                f"'game_over' for game {game_id!r}, but game {self._game_id!r} is in progress"
            )
        superseded = self._superseded(error, GameOver.TYPE)
        if superseded is not None:
            self._abandoned.add(superseded)
        self._open_id = None
        self._game_id = None

    def _superseded(self, error: type[ProtocolError], kind: str) -> int | None:
        """The open request that a new request or ``game_over`` replaces, if any.

        On the bot's side the referee has given up on it; on the referee's side it must
        have called :meth:`abandon_request` first.
        """
        if self._open_id is None:
            return None
        if self._role == "referee":
            raise error(
                f"{kind!r} while request {self._open_id} is unanswered"
                " (call abandon_request() to give up on it)"
            )
        return self._open_id
