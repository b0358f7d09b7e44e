"""What opening remote seats needs from the host: the tokens file, written for the bots'
owners and readable by its owner only, and the TLS context; the typed error when either
cannot be had."""

from __future__ import annotations

import contextlib
import logging
import ssl
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import trio

from referee.core import FileWriteError, write_atomically
from referee.shell.admission import (
    PREAUTH_TIMEOUT_S,
    RateLimiter,
)
from referee.shell.network import RemoteSetupError, format_address
from referee.shell.remote import (
    DEFAULT_JOIN_TIMEOUT_S,
    MAX_PENDING,
    MAX_PENDING_PER_ADDRESS,
    RemoteSeats,
)
from referee.shell.services import service_nursery

__all__ = ["open_remote_seats", "server_tls_context", "write_tokens"]

#: The remote seats' own logger.
log = logging.getLogger("referee.shell.remote")


def write_tokens(path: Path, tokens: Mapping[str, str]) -> None:
    """Write ``NAME TOKEN`` lines to ``path``, readable by its owner only (mode 0600).

    The file is written under a temporary name in the same directory and renamed into
    place, so that it never exists with other permissions or half written."""
    path = Path(path)
    text = "".join(f"{name} {token}\n" for name, token in tokens.items())
    try:
        write_atomically(path, text, what="tokens file", mode=0o600)
    except FileWriteError as exc:
        raise RemoteSetupError(str(exc)) from None


def server_tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server-side TLS context with the certificate chain ``cert`` and its ``key``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except OSError as exc:
        raise RemoteSetupError(
            f"cannot read the TLS certificate {cert} or key {key}: {exc.strerror or exc}"
        ) from None
    except ssl.SSLError as exc:
        raise RemoteSetupError(
            f"cannot use the TLS certificate {cert} with the key {key}: {exc}"
        ) from None
    return context


@contextlib.asynccontextmanager
async def open_remote_seats(
    names: Sequence[str],
    listen: tuple[str, int],
    *,
    tokens_path: Path | None = None,
    join_timeout_s: float = DEFAULT_JOIN_TIMEOUT_S,
    tls: ssl.SSLContext | None = None,
    limiter: RateLimiter | None = None,
    preauth_timeout_s: float = PREAUTH_TIMEOUT_S,
    max_pending: int = MAX_PENDING,
    max_pending_per_address: int = MAX_PENDING_PER_ADDRESS,
) -> AsyncIterator[RemoteSeats]:
    """Listen on ``listen`` (host, port; port 0 picks a free one) for the bots of the
    remote seats ``names``, write their tokens to ``tokens_path``, and yield the seats.

    On exit every bot still connected is sent ``shutdown`` and every connection is
    closed. Raises :class:`RemoteSetupError` when the address cannot be listened on or
    the tokens file cannot be written. Exceptions from the body leave unwrapped.
    """
    seats = RemoteSeats(
        names, join_timeout_s=join_timeout_s, tls=tls, limiter=limiter,
        preauth_timeout_s=preauth_timeout_s, max_pending=max_pending,
        max_pending_per_address=max_pending_per_address,
    )
    host, port = listen
    try:
        listeners = await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        raise RemoteSetupError(
            f"cannot listen on {format_address(host, port)}: {exc.strerror or exc}"
        ) from None
    try:
        for listener in listeners:
            name = listener.socket.getsockname()
            seats.addresses.append((str(name[0]), int(name[1])))
        if tokens_path is not None:
            write_tokens(tokens_path, seats.tokens)
        where = ", ".join(format_address(h, p) for h, p in seats.addresses)
        security = "TLS" if tls is not None else "plain TCP"
        log.info("remote seats %s listen on %s (%s); tokens in %s", ", ".join(names), where,
                 security, tokens_path if tokens_path is not None else "memory")
        async with service_nursery() as nursery:
            seats.serve(listeners, nursery)
            try:
                yield seats
            finally:
                with trio.CancelScope(shield=True):
                    await seats.close_all()
    finally:
        with trio.CancelScope(shield=True):
            for listener in listeners:
                await listener.aclose()
