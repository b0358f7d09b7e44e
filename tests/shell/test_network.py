"""Addresses and the words for network failures, shared by the server and the client."""

from __future__ import annotations

import ssl

import pytest

from referee.core.errors import UserError
from referee.shell.network import (
    RemoteSetupError,
    describe_error,
    format_address,
    not_tls,
    parse_address,
)


def test_parse_address() -> None:
    assert parse_address("8000") == ("127.0.0.1", 8000)
    assert parse_address(":8000") == ("127.0.0.1", 8000)
    assert parse_address("0.0.0.0:1") == ("0.0.0.0", 1)
    assert parse_address("example.org:443") == ("example.org", 443)
    assert parse_address("[::1]:9") == ("::1", 9)
    for bad in ("", "host", "host:", "::1:80", "[::1]", "h:99999"):
        with pytest.raises(RemoteSetupError):
            parse_address(bad)
    assert issubclass(RemoteSetupError, UserError)  # one line and exit status 2 on the CLI


def test_format_address_round_trips() -> None:
    for host, port in (("127.0.0.1", 80), ("::1", 9), ("example.org", 443)):
        assert parse_address(format_address(host, port)) == (host, port)


def test_describe_error_and_not_tls() -> None:
    try:
        try:
            raise ConnectionResetError("reset by peer")
        except OSError as inner:
            raise RuntimeError("the stream broke") from inner
    except RuntimeError as outer:
        assert describe_error(outer) == "ConnectionResetError: reset by peer"
    assert describe_error(ExceptionGroup("g", [ValueError()])) == "ValueError"
    wrong = ssl.SSLError(1, "wrong version number")
    wrong.reason = "WRONG_VERSION_NUMBER"
    assert not_tls(wrong) and not not_tls(ValueError("x"))
