"""sysinfo() tells a bot run under bwrap fixed figures (the referee answers it:
referee/shell/sysinfo_notify.py), so two bots of one game hear nothing of each other
through it: a hostile probe (tests/hostile_bots/sysinfo_probe.py) samples it while a
third process starts processes and allocates memory. Run bare, the same probe hears
the host: so the tests prove the answer, not the probe."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.core import BotCommand, ResourceLimits, Sandbox
from referee.shell.spawn import open_bot_process
from referee.shell.sysinfo_notify import BURST, PROCS, RATE, SysinfoNotifier

PROBE = Path(__file__).resolve().parents[1] / "hostile_bots" / "sysinfo_probe.py"
MIB = 1 << 20
HOST_TOTAL = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
SAMPLE_S = 2.0
#: A third process whose processes and memory come and go (tests/hostile_bots/disturber.py).
DISTURBER = (str(Path(__file__).resolve().parents[1] / "hostile_bots" / "disturber.py"),
             "30", "64")



async def _probe(command: BotCommand, out: list[dict[str, Any]]) -> None:
    async with open_bot_process(command) as process:
        data = b""
        deadline = trio.current_time() + SAMPLE_S + 60
        while chunk := await process.receive_some(1 << 16, deadline=deadline):
            data += chunk
        assert data, process.stderr_tail()
        out.append(json.loads(data))


def probes(*commands: BotCommand) -> list[dict[str, Any]]:
    """What each probe saw, all run at once while the disturber runs."""
    disturber = subprocess.Popen([sys.executable, *DISTURBER])
    try:
        async def run() -> list[list[dict[str, Any]]]:
            outs: list[list[dict[str, Any]]] = [[] for _ in commands]
            async with trio.open_nursery() as nursery:
                for command, out in zip(commands, outs, strict=True):
                    nursery.start_soon(_probe, command, out)
            return outs
        return [out[0] for out in trio.run(run)]
    finally:
        disturber.kill()
        disturber.wait()


def probe(*, sandbox: Sandbox | None = None, memory_mb: int | None = None,
          mode: tuple[str, ...] = ()) -> BotCommand:
    return BotCommand((sys.executable, str(PROBE), str(SAMPLE_S), *mode), sandbox=sandbox,
                      limits=ResourceLimits(memory_mb=memory_mb, pids=64))


def fixed(totalram: int, unit: int = 1) -> list[int]:
    """A sample of the fixed figures: all the memory free, no swap, no load."""
    return [totalram, totalram, 0, 0, 0, 0, PROCS, 0, 0, 0, unit]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["sandboxed", "contained"])
def test_two_bots_of_one_game_see_fixed_figures_while_the_host_changes(how: str) -> None:
    sandbox = Sandbox() if how == "sandboxed" else None
    limited, unlimited = probes(probe(sandbox=sandbox, memory_mb=256),
                                probe(sandbox=sandbox))
    for seen, total in ((limited, 256 * MIB), (unlimited, HOST_TOTAL)):
        assert not seen["errors"], seen
        assert len(seen["samples"]) >= 5, seen
        assert all(sample == fixed(total) for sample in seen["samples"]), seen
        # glibc's count of the machine's pages comes from sysinfo: sane, the same.
        assert seen["phys_pages"] * seen["page_size"] == total, seen
        assert abs(seen["uptime"] - time.clock_gettime(time.CLOCK_BOOTTIME)) < 120, seen
        assert seen["fault"] == errno.EFAULT, seen  # a pointer to nowhere


@pytest.mark.slow
def test_the_32_bit_call_gets_the_same_figures_in_32_bits() -> None:
    small, large = probes(probe(sandbox=Sandbox(), memory_mb=256, mode=("int80",)),
                          probe(sandbox=Sandbox(), mode=("int80",)))
    assert not small["errors"] and not large["errors"], (small, large)
    assert all(s == fixed(256 * MIB) for s in small["samples"]), small
    if HOST_TOTAL >= 1 << 32:  # counted in pages, as the kernel's own 32-bit call does
        expected = fixed(min(HOST_TOTAL // 4096, (1 << 32) - 1), 4096)
    else:
        expected = fixed(HOST_TOTAL)
    assert all(s == expected for s in large["samples"]), large


@pytest.mark.slow
@pytest.mark.usefixtures("uncontained")
def test_the_same_probe_hears_the_host_when_bots_run_bare() -> None:
    (seen,) = probes(probe())
    assert not seen["errors"], seen
    samples = seen["samples"]
    assert samples[0][0] == HOST_TOTAL, seen
    # The disturber's processes and memory come and go: the counts move.
    assert len({(s[1], s[6]) for s in samples}) > 1, seen


@pytest.mark.slow
def test_a_bot_that_calls_sysinfo_in_a_loop_waits_for_its_turn() -> None:
    calls = BURST + 40
    code = (f"import ctypes, time; libc = ctypes.CDLL(None); b = ctypes.create_string_buffer"
            f"(128); t = time.monotonic(); [libc.sysinfo(b) for _ in range({calls})];"
            f" print(time.monotonic() - t)")
    command = BotCommand((sys.executable, "-c", code), sandbox=Sandbox())

    async def output() -> str:
        async with open_bot_process(command) as process:
            return (await process.receive_some(
                64, deadline=trio.current_time() + 60)).decode()

    # At most RATE answers a second after the first BURST: a lower bound, whatever the
    # machine's speed (the referee's CPU for a flood stays bounded).
    assert float(trio.run(output)) >= (calls - BURST - 1) / RATE


#: A bot whose thread calls sysinfo() without end and whose exit waits for that thread
#: (as a JVM's halt waits for its compiler threads, which ask before adding one).
FLOOD_THEN_EXIT = """
import ctypes, sys, threading
libc, stop = ctypes.CDLL(None), threading.Event()
def flood():
    buffer = ctypes.create_string_buffer(128)
    while not stop.is_set():
        libc.sysinfo(buffer)
thread = threading.Thread(target=flood)
thread.start()
sys.stdout.write("flooding\\n"); sys.stdout.flush()
sys.stdin.buffer.read()
stop.set()
thread.join()
"""


@pytest.mark.slow
def test_a_bot_asked_to_exit_never_waits_for_its_sysinfo_turn(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # One answer every 50 s once the burst is spent: a flood's next call waits that long,
    # unless the referee ends the rationing when it waits for the bot's exit.
    monkeypatch.setattr("referee.shell.sysinfo_notify.RATE", 0.2)
    command = BotCommand((sys.executable, "-c", FLOOD_THEN_EXIT), sandbox=Sandbox())

    async def exit_status() -> int:
        async with open_bot_process(command) as process:
            assert await process.receive_some(64, deadline=trio.current_time() + 60)
            await trio.sleep(0.5)  # the burst is spent: the flood waits for its turn
            await process.close_input()
            with trio.fail_after(20):  # with the rationing on: 50 s
                return await process.wait()

    assert trio.run(exit_status) == 0


def test_sysinfo_fails_at_once_when_no_referee_answers() -> None:
    # The listener is closed unserved, as when the referee is gone: ENOSYS, no wait.
    notifier = SysinfoNotifier()
    try:
        child = subprocess.Popen([sys.executable, str(PROBE), "0"], stdout=subprocess.PIPE,
                                 preexec_fn=notifier.install_in_child)
        listener = notifier.take_listener()
    finally:
        notifier.close()
    assert listener is not None
    os.close(listener)
    out, _ = child.communicate(timeout=60)
    seen = json.loads(out)
    assert seen["errors"] and set(seen["errors"]) == {38}, seen  # ENOSYS
    assert not seen["samples"], seen


def test_java_sizes_its_heap_from_the_bots_memory(tmp_path: Path) -> None:
    command = BotCommand(("java", "-XX:+PrintFlagsFinal", "-version"), sandbox=Sandbox(),
                         limits=ResourceLimits(memory_mb=512))

    async def output() -> str:
        async with open_bot_process(command) as process:
            out = b""
            while chunk := await process.receive_some(1 << 16,
                                                      deadline=trio.current_time() + 120):
                out += chunk
            return out.decode()

    flags = {line.split()[1]: line.split()[3] for line in trio.run(output).splitlines()
             if len(line.split()) >= 4 and line.split()[2] == "="}
    # The JVM's default: a quarter of the machine's memory, here the bot's 512 MiB.
    assert int(flags["MaxHeapSize"]) == 128 * MIB, flags.get("MaxHeapSize")


def test_a_kernel_that_cannot_hand_sysinfo_over_is_said_in_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.shell import sandbox, sysinfo_notify

    def refused(*_args: object) -> int:
        return -1

    for cached in (sysinfo_notify.require_notification, sandbox.containment):
        cached.cache_clear()
    monkeypatch.setattr(sysinfo_notify, "_libc_calls", lambda: (refused, refused))
    try:
        with pytest.raises(sandbox.SandboxError) as caught:
            sandbox.require_sandbox()
        contained = sandbox.containment()
    finally:
        monkeypatch.undo()
        for cached in (sysinfo_notify.require_notification, sandbox.containment):
            cached.cache_clear()
    assert "seccomp user notification, Linux 5.0 or later" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not contained.contained and "Linux 5.0" in contained.why
