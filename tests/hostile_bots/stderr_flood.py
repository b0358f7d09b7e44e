"""Writes MB megabytes (default 24) to stderr before its handshake, and 1 MiB more
before every answer; otherwise plays normally. Blocks if stderr is not drained.

Usage: stderr_flood.py [MB]
"""

from _common import Bot, arg, play, write_raw
from taki_protocol import Request

LINE = b"flood " * 20 + b"\n"
MIB = LINE * (1048576 // len(LINE))


def flood(mib: int) -> None:
    for _ in range(mib):
        write_raw(MIB, fd=2)


flood(arg(1, 24))


def hook(bot: Bot, request: Request) -> bool:
    flood(1)
    return False


play("stderr-flood", hook)
