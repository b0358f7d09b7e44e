"""Two bots of one game cannot pass each other bits: a hostile pair
(tests/hostile_bots/channel.py) tries each channel, and the
receiver must read nothing of what the sender sent. Run bare (``TAKI_REFEREE_CONTAIN=
off``), the same pair passes every bit of the locks and inotify: so the tests prove the
sandbox, not the pair. benchmarks/channels.py measures the bandwidths."""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
import trio

from referee.core import BotCommand, ResourceLimits, Sandbox
from referee.shell.spawn import open_bot_process

CHANNEL = Path(__file__).resolve().parents[1] / "hostile_bots" / "channel.py"
BITS = 48
#: Both ends start within this many seconds (a loaded machine).
START_S = 3.0


async def _output(command: BotCommand, deadline: float) -> str:
    async with open_bot_process(command) as process:
        out = b""
        while chunk := await process.receive_some(1 << 16, deadline=deadline):
            out += chunk
        return out.decode().strip()


async def _pair(script: Path, channel: str, bits: str, slot_ms: int, how: str) -> str:
    start = time.time() + START_S
    sandbox = Sandbox() if how == "sandboxed" else None
    limits = ResourceLimits(pids=128) if how == "sandboxed" else ResourceLimits()

    def command(role: str, what: str) -> BotCommand:
        return BotCommand((sys.executable, str(script), role, channel, f"{start:.3f}",
                           str(slot_ms), what), sandbox=sandbox, limits=limits)

    deadline = trio.current_time() + START_S + len(bits) * slot_ms / 1000 + 20
    got: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_output, command("send", bits), deadline)

        async def receive() -> None:
            got.append(await _output(command("recv", str(len(bits))), deadline))
        nursery.start_soon(receive)
    return got[0]


def pair(channel: str, slot_ms: int, how: str) -> tuple[str, str]:
    bits = "".join(random.choice("01") for _ in range(BITS))
    # A copy of the pair's script in a folder of its own is the file they lock: no other
    # program's lock (nor another test's pair) reaches the channel.
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / CHANNEL.name
        shutil.copyfile(CHANNEL, script)
        os.chmod(folder, 0o755)
        return bits, trio.run(_pair, script, channel, bits, slot_ms, how)


def errors(sent: str, got: str) -> int:
    return sum(a != b for a, b in zip(sent, got, strict=True))


@pytest.mark.parametrize("channel", ["flock", "fcntl"])
def test_locks_on_a_shared_file_carry_nothing(channel: str) -> None:
    sent, got = pair(channel, 40, "sandboxed")
    assert got == "0" * BITS, (sent, got)  # no lock is ever seen


def test_inotify_is_denied() -> None:
    _sent, got = pair("inotify", 40, "sandboxed")
    assert got.startswith("denied: [Errno 1]"), got


# The controls pass bits through the slots' timing, which a loaded machine blurs: slow.
@pytest.mark.slow
@pytest.mark.parametrize("channel", ["flock", "fcntl"])
def test_contained_bots_keep_their_locks(channel: str) -> None:
    # They share the host's files anyway, and programs lock files against each other.
    sent, got = pair(channel, 80, "contained")
    assert errors(sent, got) <= BITS // 4, (sent, got)


@pytest.mark.slow
@pytest.mark.usefixtures("uncontained")
@pytest.mark.parametrize("channel", ["flock", "fcntl", "inotify"])
def test_the_same_pair_talks_when_bots_run_bare(channel: str) -> None:
    sent, got = pair(channel, 160, "bare")
    # A quarter wrong at most: a receiver that guesses gets that few once in 3,000 runs
    # (a loaded machine delays the sender now and then: a 1 read as a 0; slots of 160 ms
    # keep that rare at a load of 7 per CPU).
    assert errors(sent, got) <= BITS // 4, (sent, got)


def test_proc_loadavg_is_frozen() -> None:
    sent, got = pair("loadavg", 60, "sandboxed")
    # The file never changes: every slot reads the same value, all zeros.
    assert got == "0" * BITS, (sent, got)


@pytest.mark.slow
def test_sysinfo_is_fixed() -> None:
    sent, got = pair("sysinfo", 60, "sandboxed")
    # The referee answers with the same figures every time: all zeros.
    assert got == "0" * BITS, (sent, got)
