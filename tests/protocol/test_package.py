"""The taki_protocol package as a bot's dependency: what it imports and exports."""

import subprocess
import sys

import taki_protocol


def test_importing_the_package_does_not_import_trio() -> None:
    """A bot that uses the package pulls in msgpack and attrs, never the referee's trio."""
    code = "import taki_protocol, sys; assert 'trio' not in sys.modules, 'trio imported'"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_every_error_class_is_exported() -> None:
    for name in (
        "ProtocolError",
        "RemoteProtocolError",
        "LocalProtocolError",
        "MessageTooLargeError",
        "ReceivedMessageTooLargeError",
        "SentMessageTooLargeError",
    ):
        assert name in taki_protocol.__all__
        assert issubclass(getattr(taki_protocol, name), taki_protocol.ProtocolError)
