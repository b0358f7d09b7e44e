"""The network words that the remote-seat server (``referee.shell.remote``) and the
connect client (``referee.shell.connect``) share: addresses and what a failed connection
or TLS handshake was."""

from __future__ import annotations

import re
import ssl
from typing import Final

from referee.core import UserError, first_leaf

__all__ = ["RemoteSetupError", "describe_error", "format_address", "not_tls", "parse_address"]

_NOT_TLS_REASONS: Final = frozenset(
    {"WRONG_VERSION_NUMBER", "HTTP_REQUEST", "UNKNOWN_PROTOCOL", "RECORD_LAYER_FAILURE"}
)
"""What OpenSSL says when the other end answers a TLS handshake with something else."""


class RemoteSetupError(UserError):
    """The remote seats cannot be opened as asked (address, TLS files, tokens file)."""


_ADDRESS = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.%\w]+)\]|(?P<host>[^\[\]:]*)):(?P<port>\d{1,5})$")


def parse_address(text: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT``, ``:PORT`` or ``PORT`` (on ``default_host``)."""
    text = text.strip()
    if text.isdigit():
        host, port = default_host, int(text)
    else:
        match = _ADDRESS.match(text)
        if match is None:
            raise RemoteSetupError(
                f"bad address {text!r}: expected HOST:PORT, [IPv6]:PORT or PORT"
            )
        host = match.group("v6") or match.group("host") or default_host
        port = int(match.group("port"))
    if not 0 <= port <= 65535:
        raise RemoteSetupError(f"bad address {text!r}: port {port} is not between 0 and 65535")
    return host, port


def format_address(host: str, port: int) -> str:
    """``host:port``, with brackets around an IPv6 host."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def describe_error(exc: BaseException) -> str:
    """What a stream failure was, for humans: its innermost cause (following
    ``__cause__`` and the first exception of groups) as ``Type: message``, or the type
    alone when it has no message."""
    seen: set[int] = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = first_leaf(exc)
        elif exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            break
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def not_tls(exc: BaseException) -> bool:
    """Whether a failed TLS handshake failed because the peer does not speak TLS."""
    while exc.__cause__ is not None and not isinstance(exc, ssl.SSLError):
        exc = exc.__cause__
    return isinstance(exc, ssl.SSLError) and exc.reason in _NOT_TLS_REASONS
