"""Typed errors of the protocol layer.

As in h11, :class:`ProtocolError` splits by who is at fault: :class:`RemoteProtocolError`
when the peer broke the protocol, :class:`LocalProtocolError` when this side tried to.
:class:`MessageTooLargeError` crosses that split: a message over the size limit is caught
by it in either direction, and also by the class of its direction.
"""


class ProtocolError(Exception):
    """Base class: something about the message stream is wrong."""


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol.

    Raised while decoding: bytes that are not msgpack, a top-level value that is not a map,
    an unknown message type, a field with the wrong type or range, a message over the size
    limit (also a :class:`MessageTooLargeError`), a connection closed in the middle of a
    message, an unsupported protocol version, or a message that is not allowed at this
    point of the conversation.
    """


class RepeatedAnswerError(RemoteProtocolError):
    """The bot answered a request a second time (one answer per request).

    Raised by the referee's codec when an ``action`` names the last request, already
    answered; kept apart from an answer sent ahead of its request, since the bot did
    nothing early: it answered twice."""


class LocalProtocolError(ProtocolError):
    """This side tried to do something the protocol forbids.

    Raised when building a message with invalid fields, when sending a message that this
    role may not send or may not send now or that is over the size limit (also a
    :class:`MessageTooLargeError`), or when using the codec incorrectly.
    """


class MessageTooLargeError(ProtocolError):
    """A message over the size limit (``MAX_MESSAGE_SIZE`` unless the codec was given
    another), in either direction.

    Never raised as itself: a message received over the limit raises
    :class:`ReceivedMessageTooLargeError`, also a :class:`RemoteProtocolError`; one that
    this side tried to send raises :class:`SentMessageTooLargeError`, also a
    :class:`LocalProtocolError`. A received message is refused as soon as a header shows
    that it cannot fit, before its contents arrive.
    """

    limit: int
    """The size limit that was exceeded, in bytes."""

    size: int | None
    """The message's size in bytes when known (always for a message sent; for one
    received, the size it was found to need at least, when a header declared it)."""

    def __init__(self, message: str, *, limit: int, size: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.size = size

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_too_large, (type(self), str(self), self.limit, self.size))


def _rebuild_too_large(
    cls: type[MessageTooLargeError], message: str, limit: int, size: int | None
) -> MessageTooLargeError:
    return cls(message, limit=limit, size=size)


class ReceivedMessageTooLargeError(MessageTooLargeError, RemoteProtocolError):
    """The peer sent a message over the size limit."""


class SentMessageTooLargeError(MessageTooLargeError, LocalProtocolError):
    """This side tried to send a message over the size limit."""
