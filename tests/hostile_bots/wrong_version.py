"""Reads hello, then answers with a bot_hello claiming protocol version 2."""

import os
import time

import msgpack  # type: ignore[import-untyped]
from _common import write_raw

os.read(0, 65536)  # the hello
write_raw(msgpack.packb({"type": "bot_hello", "protocol": 2, "name": "from-the-future"}))
time.sleep(3600)
