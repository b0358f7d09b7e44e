"""A Super Taki bot for taki-referee: the protocol loop (protocol/PROTOCOL.md, version 1).

The referee writes MessagePack maps to stdin, back to back; the bot answers each
``decide`` and ``react`` with one ``action`` on stdout. Everything else the bot prints
goes to stderr (the referee keeps it in a log). The decisions are made in strategy.py.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, NoReturn

import msgpack
from strategy import choose

PROTOCOL = 1
NAME = sys.argv[1] if len(sys.argv) > 1 else "python-kit"


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def send(message: dict[str, Any]) -> None:
    """One message, written at once and unbuffered: nothing waits in a buffer."""
    data = memoryview(msgpack.packb(message, use_bin_type=True))
    while data:
        data = data[os.write(1, data):]


def leave(status: int) -> NoReturn:
    sys.stderr.flush()
    os._exit(status)  # at once: no clean-up that could outlast the referee's patience


def answer(request: dict[str, Any]) -> None:
    started = time.monotonic()
    legal = request["legal"]
    try:
        choice = choose(request["view"], legal)
        if not 0 <= choice < len(legal):
            raise ValueError(f"choose returned {choice} for {len(legal)} legal actions")
    except Exception as exc:  # a bug in the strategy must not cost the game
        log(f"strategy failed ({exc!r}); playing the first legal action")
        choice = 0
    # Declaring "last card" costs nothing when it is not needed: always declare.
    send({"type": "action", "id": request["id"], "choice": choice, "last_card": True})
    spent_ms = (time.monotonic() - started) * 1000
    if spent_ms > request["deadline_ms"] / 2:
        log(f"request {request['id']}: {spent_ms:.0f} ms of {request['deadline_ms']} ms")


def handle(message: dict[str, Any]) -> None:
    kind = message.get("type")
    if kind == "hello":
        if message.get("protocol") != PROTOCOL:
            log(f"unsupported protocol version {message.get('protocol')!r}")
            leave(1)
        send({"type": "bot_hello", "protocol": PROTOCOL, "name": NAME})
    elif kind in ("decide", "react"):
        answer(message)
    elif kind in ("game_start", "game_over"):
        pass  # the seat, the rules and the results: keep what your strategy needs
    elif kind == "error":
        log(f"forfeited: {message.get('reason')}: {message.get('message')}")
        leave(0)
    elif kind == "shutdown":
        leave(0)
    else:
        log(f"ignoring a message of unknown type {kind!r}")


def main() -> None:
    # A streaming decoder: messages may arrive in pieces, or several in one read.
    unpacker = msgpack.Unpacker(raw=False, max_buffer_size=2**21)
    while True:
        data = os.read(0, 65536)
        if not data:
            leave(0)  # end of input: the referee has gone
        unpacker.feed(data)
        for message in unpacker:
            if isinstance(message, dict):
                handle(message)
            else:
                log(f"ignoring a message that is not a map: {type(message).__name__}")


if __name__ == "__main__":
    main()
