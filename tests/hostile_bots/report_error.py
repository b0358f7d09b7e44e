"""Commits one fault, then reads the referee's ``error`` message and writes
``REASON: MESSAGE`` to FILE (and to stderr) before exiting with status 0, as PROTOCOL.md
(section 3.6) lets a bot do. Written from the specification alone, with plain msgpack.

Usage: report_error.py FAULT FILE

FAULT is a handshake fault, ``version`` (a bot_hello for protocol 2), ``no_name`` (a
bot_hello without its name), ``long_name`` (a name of 65 characters) or ``early_answer``
(an action instead of bot_hello), or ``illegal`` (a game fault: after two requests
answered, a choice one past the end of the legal list).
"""

import os
import sys
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
from _common import write_raw

FAULT = sys.argv[1]
OUT = Path(sys.argv[2])
HELLOS = {
    "version": {"type": "bot_hello", "protocol": 2, "name": "report-error"},
    "no_name": {"type": "bot_hello", "protocol": 1},
    "long_name": {"type": "bot_hello", "protocol": 1, "name": "n" * 65},
    "early_answer": {"type": "action", "id": 1, "choice": 0, "last_card": False},
    "illegal": {"type": "bot_hello", "protocol": 1, "name": "report-error"},
}


def send(message: dict[str, object]) -> None:
    write_raw(msgpack.packb(message))


def main() -> int:
    unpacker = msgpack.Unpacker(raw=False)
    requests = 0
    while True:
        data = os.read(0, 65536)
        if not data:
            return 1  # the input ended without an error message
        unpacker.feed(data)
        for message in unpacker:
            kind = message.get("type")
            if kind == "hello":
                send(HELLOS[FAULT])
            elif kind in ("decide", "react"):
                requests += 1
                legal = message["legal"]
                choice = len(legal) if requests > 2 else 0
                send({"type": "action", "id": message["id"], "choice": choice})
            elif kind == "error":
                text = f"{message['reason']}: {message['message']}"
                OUT.write_text(text, encoding="utf-8")
                print(f"referee error: {text}", file=sys.stderr)
                return 0


sys.exit(main())
