"""The Super Taki referee protocol: messages, a sans-I/O codec and a bot SDK.

See PROTOCOL.md for the specification this package implements.
"""

from ._checks import trusted_data
from .codec import EOF, NEED_DATA, Codec, Role, Sentinel, pack_message, unpack_message
from .constants import (
    FORFEIT_REASONS,
    MAX_CONTAINER_LEN,
    MAX_MESSAGE_SIZE,
    PROTOCOL_VERSION,
    ForfeitReason,
)
from .errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from .messages import (
    MESSAGE_CLASSES,
    Answer,
    BotHello,
    BotMessage,
    Decide,
    Error,
    Forfeit,
    GameOver,
    GameStart,
    Hello,
    JsonMap,
    Message,
    React,
    RefereeMessage,
    Request,
    Rules,
    Shutdown,
    Standing,
    TimeControl,
    decode_message,
)
from .sdk import Choice, Chooser, resolve_choice, run_bot

__all__ = [
    "EOF",
    "FORFEIT_REASONS",
    "MAX_CONTAINER_LEN",
    "MAX_MESSAGE_SIZE",
    "MESSAGE_CLASSES",
    "NEED_DATA",
    "PROTOCOL_VERSION",
    "Answer",
    "BotHello",
    "BotMessage",
    "Choice",
    "Chooser",
    "Codec",
    "Decide",
    "Error",
    "Forfeit",
    "ForfeitReason",
    "GameOver",
    "GameStart",
    "Hello",
    "JsonMap",
    "LocalProtocolError",
    "Message",
    "ProtocolError",
    "React",
    "RefereeMessage",
    "RemoteProtocolError",
    "Request",
    "Role",
    "Rules",
    "Sentinel",
    "Shutdown",
    "Standing",
    "TimeControl",
    "decode_message",
    "pack_message",
    "resolve_choice",
    "run_bot",
    "trusted_data",
    "unpack_message",
]
