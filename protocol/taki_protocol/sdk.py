"""A minimal bot runtime: speak the protocol on stdin/stdout and ask a function for moves.

Example::

    import random
    from taki_protocol import run_bot

    run_bot(lambda view, legal: random.randrange(len(legal)), name="random")

This module uses plain blocking I/O, as it runs inside the bot process. While
:func:`run_bot` runs with the default streams, ``sys.stdout`` is redirected to
``sys.stderr`` so that ``print()`` calls in the bot cannot corrupt the protocol stream.

The runtime trusts its referee, which checks everything the bot sends: a request's view
and legal actions reach ``choose`` as msgpack decoded them, and the conversation rules
that :class:`~taki_protocol.Codec` enforces are not checked again. Every other message
is decoded and checked in full, and a referee that breaks the framing, sends a request
of the wrong shape or a message only bots send raises :class:`RemoteProtocolError`.
"""

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import BinaryIO, TypeAlias

import msgpack  # type: ignore[import-untyped]

from ._checks import wire_type_name
from .codec import pack_message
from .constants import MAX_CONTAINER_LEN, MAX_MESSAGE_SIZE
from .errors import ReceivedMessageTooLargeError, RemoteProtocolError
from .messages import (
    Answer,
    BotHello,
    Decide,
    Error,
    GameOver,
    GameStart,
    Hello,
    JsonMap,
    React,
    Shutdown,
    decode_message,
)

__all__ = ["Choice", "Chooser", "RefereeStream", "resolve_choice", "run_bot"]

_READ_SIZE = 65_536

Choice: TypeAlias = int | JsonMap | tuple[int | JsonMap, bool]
"""What a chooser returns: an index into ``legal``, one of the ``legal`` maps, or either of
those paired with the ``last_card`` flag."""

Chooser: TypeAlias = Callable[[JsonMap, list[JsonMap]], Choice]
"""``choose(view, legal)``: pick one of the legal actions of a ``decide`` or ``react``."""


def resolve_choice(choice: Choice, legal: list[JsonMap]) -> tuple[int, bool]:
    """Turn a chooser's return value into ``(index, last_card)``.

    Raises :class:`TypeError` or :class:`ValueError` when it does not name an entry of
    ``legal``: that is a bug in the bot, better reported than sent.
    """
    last_card = False
    if isinstance(choice, tuple):
        if len(choice) != 2 or not isinstance(choice[1], bool):
            raise TypeError(f"a choice tuple must be (index or action, last_card), got {choice!r}")
        choice, last_card = choice
    if isinstance(choice, dict):
        for index, action in enumerate(legal):
            if action is choice:
                return index, last_card
        for index, action in enumerate(legal):
            if action == choice:
                return index, last_card
        raise ValueError(f"the chosen action {choice!r} is not in the legal list")
    if isinstance(choice, bool) or not isinstance(choice, int):
        raise TypeError(f"a choice must be an index or an action map, got {choice!r}")
    if not 0 <= choice < len(legal):
        raise ValueError(f"choice index {choice} is out of range for {len(legal)} legal actions")
    return choice, last_card


def _reader(stream: BinaryIO) -> Callable[[], bytes]:
    """Return a function reading whatever is available, up to one chunk, blocking if none."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return lambda: stream.read(_READ_SIZE)
    return lambda: os.read(fd, _READ_SIZE)


def _writer(stream: BinaryIO) -> Callable[[bytes], None]:
    """A function writing a whole message at once: straight to the file descriptor
    when there is one (nothing is left in a buffer), else write and flush."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = -1
    if fd < 0:

        def write_and_flush(data: bytes) -> None:
            stream.write(data)
            stream.flush()

        return write_and_flush
    stream.flush()  # whatever was written before must not come after our messages

    def write_fd(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]

    return write_fd


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = saved


def run_bot(
    choose: Chooser,
    name: str = "python-bot",
    *,
    token: str | None = None,
    on_game_start: Callable[[GameStart], None] | None = None,
    on_game_over: Callable[[GameOver], None] | None = None,
    on_request: Callable[[JsonMap], None] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Play games for the referee until it sends ``shutdown`` or closes the stream.

    Answers ``hello`` with ``bot_hello`` carrying ``name`` (and ``token``), calls
    ``choose(view, legal)`` for every ``decide`` and ``react`` and sends its answer, and
    calls the optional hooks at the start and end of every game. An ``error`` from the
    referee is printed to stderr and ends the run. A referee that breaks the framing or
    sends a malformed message raises :class:`RemoteProtocolError` (requests are only
    checked for the types of their fields: see the module's documentation).

    ``on_request``, if given, sees every ``decide`` and ``react`` map just before
    ``choose`` does: a bot that budgets its time reads ``deadline_ms`` (and
    ``time_left_ms``) there.
    """
    if stdout is None:
        out = sys.stdout.buffer
        with _stdout_to_stderr():
            _serve(choose, name, token, on_game_start, on_game_over, on_request, stdin, out)
    else:
        _serve(choose, name, token, on_game_start, on_game_over, on_request, stdin, stdout)


def _serve(
    choose: Chooser,
    name: str,
    token: str | None,
    on_game_start: Callable[[GameStart], None] | None,
    on_game_over: Callable[[GameOver], None] | None,
    on_request: Callable[[JsonMap], None] | None,
    stdin: BinaryIO | None,
    out: BinaryIO,
) -> None:
    read = _reader(sys.stdin.buffer if stdin is None else stdin)
    write = _writer(out)
    stream = RefereeStream()
    try:
        while True:
            data = read()
            if not data:
                stream.end()
                return
            for obj in stream.feed(data):
                kind = obj.get("type")
                if kind == "decide" or kind == "react":
                    request_id, view, legal = _request(obj)
                    if on_request is not None:
                        on_request(obj)
                    index, last_card = resolve_choice(choose(view, legal), legal)
                    write(stream.pack(_answer(request_id, index, last_card)))
                    continue
                match decode_message(obj):
                    case Hello():
                        write(pack_message(BotHello(name=name, token=token)))
                    case GameStart() as message:
                        if on_game_start is not None:
                            on_game_start(message)
                    case GameOver() as message:
                        if on_game_over is not None:
                            on_game_over(message)
                    case Error() as message:
                        print(
                            f"referee error ({message.reason}): {message.message}",
                            file=sys.stderr,
                        )
                        return
                    case Shutdown():
                        return
                    case message:
                        raise RemoteProtocolError(
                            f"the referee may not send {message.TYPE!r} messages"
                        )
    except BrokenPipeError:
        return


class RefereeStream:
    """The referee's byte stream cut into message maps, and the bot's answers packed: the
    one reader of a stream from a trusted referee (the SDK; the connect client, which
    watches what it relays). Streams from untrusted peers go through
    :class:`~taki_protocol.FrameBuffer`.

    The SDK trusts its referee: messages are split and decoded by msgpack itself, with
    the protocol's limits, and a request is answered straight from its map (see
    :func:`_request`); every other message is decoded and checked in full. Leaving the
    typed messages and the conversation checks of :class:`Codec` out of a decision
    about halves what a decision costs the bot, and the referee's decision rate
    depends on it (benchmarks/ipc.py)."""

    def __init__(self) -> None:
        self._unpacker = msgpack.Unpacker(
            raw=False,
            strict_map_key=True,
            # At most an unfinished message and one more read are buffered.
            max_buffer_size=MAX_MESSAGE_SIZE + _READ_SIZE,
            max_bin_len=0,
            max_ext_len=0,
            max_array_len=MAX_CONTAINER_LEN,
            max_map_len=MAX_CONTAINER_LEN,
        )
        self._fed = 0  # bytes fed in
        self._used = 0  # bytes of the complete messages taken out
        self.pack = msgpack.Packer(use_bin_type=True).pack

    def feed(self, data: bytes) -> Iterator[JsonMap]:
        """The complete messages the stream holds once ``data`` is added."""
        try:
            self._unpacker.feed(data)
        except msgpack.BufferFull:
            raise ReceivedMessageTooLargeError(
                f"the referee sent more than {MAX_MESSAGE_SIZE} bytes without completing"
                " a message",
                limit=MAX_MESSAGE_SIZE,
            ) from None
        self._fed += len(data)
        while True:
            try:
                obj = next(self._unpacker)
            except StopIteration:
                return
            except (ValueError, msgpack.UnpackException) as exc:  # incl. msgpack's limits
                raise RemoteProtocolError(f"the referee sent bad msgpack: {exc}") from None
            self._used = self._unpacker.tell()
            if not isinstance(obj, dict):
                raise RemoteProtocolError(f"a message must be a map, got {wire_type_name(obj)}")
            yield obj

    def end(self) -> None:
        """The referee closed the stream: fine between messages, not inside one."""
        left = self._fed - self._used
        if left:
            raise RemoteProtocolError(
                f"stream closed in the middle of a message ({left} bytes received)"
            )


def _request(obj: JsonMap) -> tuple[int, JsonMap, list[JsonMap]]:
    """The id, view and legal actions of a ``decide`` or ``react`` map: taken as they
    are when they have the right types (their contents are the referee's business),
    else checked in full, which names what is wrong."""
    request_id, view, legal = obj.get("id"), obj.get("view"), obj.get("legal")
    if type(request_id) is int and type(view) is dict and type(legal) is list and legal:
        return request_id, view, legal
    message = decode_message(obj)
    assert isinstance(message, Decide | React)  # decode_message refused anything else
    return message.id, message.view, message.legal


def _answer(request_id: int, index: int, last_card: bool) -> JsonMap:
    """The wire map of :class:`Answer`, in its canonical key order (tested)."""
    return {"type": Answer.TYPE, "id": request_id, "choice": index, "last_card": last_card}
