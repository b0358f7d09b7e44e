"""Protocol-wide constants: version, sizes and value ranges."""

from typing import Final, Literal

PROTOCOL_VERSION: Final = 1
"""The protocol version spoken by this package (``protocol`` field of both hellos)."""

MAX_MESSAGE_SIZE: Final = 1_048_576
"""Largest encoded message, in bytes, accepted or produced in either direction (1 MiB)."""

MAX_BOT_MESSAGE_SIZE: Final = 4_096
"""Largest encoded message, in bytes, that the referee accepts from a bot (4 KiB): a bot
sends only ``bot_hello`` and ``action``, which need well under 1 KiB. Decoding costs time
on the referee's loop, which every other bot's clock shares, so a bot may not make it
decode a large message."""

MAX_CONTAINER_LEN: Final = 65_536
"""Largest number of elements of any msgpack array, and of entries of any map."""

MAX_NESTING: Final = 32
"""Deepest nesting of arrays and maps inside a message's free-form data (view, legal, events)."""

MAX_INT32: Final = 2**31 - 1
"""Upper bound of every integer field of the message schemas (ids, indexes, milliseconds)."""

MIN_INT32: Final = -(2**31)

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 10
MAX_NAME_LEN: Final = 64
"""Longest bot name, in characters."""

MAX_ID_LEN: Final = 128
"""Longest game id and referee identification string, in characters."""

MAX_TOKEN_LEN: Final = 1024

ForfeitReason = Literal["timeout", "crash", "protocol", "illegal"]
FORFEIT_REASONS: Final[tuple[ForfeitReason, ...]] = ("timeout", "crash", "protocol", "illegal")
"""Why a seat was forfeited; also the ``reason`` of an ``error`` message."""
