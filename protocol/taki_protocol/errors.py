"""Typed errors of the protocol layer."""


class ProtocolError(Exception):
    """Base class: something about the message stream is wrong."""


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol.

    Raised while decoding: bytes that are not msgpack, a top-level value that is not a map,
    an unknown message type, a field with the wrong type or range, a message over the size
    limit, a connection closed in the middle of a message, an unsupported protocol version,
    or a message that is not allowed at this point of the conversation.
    """


class LocalProtocolError(ProtocolError):
    """This side tried to do something the protocol forbids.

    Raised when building a message with invalid fields, when sending a message that this
    role may not send or may not send now, or when using the codec incorrectly.
    """
