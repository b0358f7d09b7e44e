"""A minimal bot runtime: speak the protocol on stdin/stdout and ask a function for moves.

Example::

    import random
    from taki_protocol import run_bot

    run_bot(lambda view, legal: random.randrange(len(legal)), name="random")

This module uses plain blocking I/O, as it runs inside the bot process. While
:func:`run_bot` runs with the default streams, ``sys.stdout`` is redirected to
``sys.stderr`` so that ``print()`` calls in the bot cannot corrupt the protocol stream.
"""

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import BinaryIO, TypeAlias

from .codec import EOF, NEED_DATA, Codec
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
)

__all__ = ["Choice", "Chooser", "resolve_choice", "run_bot"]

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
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Play games for the referee until it sends ``shutdown`` or closes the stream.

    Answers ``hello`` with ``bot_hello`` carrying ``name`` (and ``token``), calls
    ``choose(view, legal)`` for every ``decide`` and ``react`` and sends its answer, and
    calls the optional hooks at the start and end of every game. An ``error`` from the
    referee is printed to stderr and ends the run. A protocol violation by the referee
    raises :class:`RemoteProtocolError`.
    """
    if stdout is None:
        out = sys.stdout.buffer
        with _stdout_to_stderr():
            _serve(choose, name, token, on_game_start, on_game_over, stdin, out)
    else:
        _serve(choose, name, token, on_game_start, on_game_over, stdin, stdout)


def _serve(
    choose: Chooser,
    name: str,
    token: str | None,
    on_game_start: Callable[[GameStart], None] | None,
    on_game_over: Callable[[GameOver], None] | None,
    stdin: BinaryIO | None,
    out: BinaryIO,
) -> None:
    read = _reader(sys.stdin.buffer if stdin is None else stdin)
    codec = Codec("bot", trust_peer=True)  # the referee is the bot's trusted peer

    write = _writer(out)

    try:
        while True:
            message = codec.next_message()
            if message is NEED_DATA:
                codec.receive_data(read())
                continue
            if message is EOF:
                return
            match message:
                case Hello():
                    write(codec.send(BotHello(name=name, token=token)))
                case GameStart():
                    if on_game_start is not None:
                        on_game_start(message)
                case Decide() | React():
                    index, last_card = resolve_choice(
                        choose(message.view, message.legal), message.legal
                    )
                    write(codec.send(Answer(id=message.id, choice=index, last_card=last_card)))
                case GameOver():
                    if on_game_over is not None:
                        on_game_over(message)
                case Error():
                    print(f"referee error ({message.reason}): {message.message}", file=sys.stderr)
                    return
                case Shutdown():
                    return
    except BrokenPipeError:
        return
