"""Whether one bot's flood of sysinfo() calls slows another bot's answers: in one
referee process, a victim bot times its own sysinfo() calls (one every 20 ms) while a
second bot either sleeps (quiet) or calls sysinfo() without end from 40 threads
(flooded; the referee answers it at its rate limit, the rest waits in the kernel).
Rounds alternate quiet and flooded; the medians of the victim's answer times and the
referee's CPU time per second of each phase are printed, with the load average.

Run from the repository root: ``.venv/bin/python benchmarks/sysinfo_flood.py
[--rounds 4] [--seconds 3] [--sandbox]``. Last line: ``sysinfo flood: ...``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys

import trio

from referee.core import BotCommand, ResourceLimits, Sandbox
from referee.shell.spawn import open_bot_process

VICTIM = """
import ctypes, json, sys, time
libc = ctypes.CDLL(None)
buffer = ctypes.create_string_buffer(128)
times, end = [], time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    start = time.perf_counter_ns()
    libc.sysinfo(buffer)
    times.append((time.perf_counter_ns() - start) / 1000)
    time.sleep(0.02)
print(json.dumps(times), flush=True)
"""
FLOOD = """
import ctypes, sys, threading, time
libc = ctypes.CDLL(None)
def flood():
    buffer = ctypes.create_string_buffer(128)
    while True:
        libc.sysinfo(buffer)
if sys.argv[1] == "flood":
    for _ in range(40):
        threading.Thread(target=flood, daemon=True).start()
time.sleep(3600)
"""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def phase(mode: str, seconds: float, sandbox: Sandbox | None) -> tuple[list[float], float]:
    """The victim's answer times (µs) and the referee's CPU seconds a second."""
    limits = ResourceLimits(pids=64)
    other = BotCommand((sys.executable, "-c", FLOOD, mode), sandbox=sandbox, limits=limits)
    victim = BotCommand((sys.executable, "-c", VICTIM, str(seconds)), sandbox=sandbox,
                        limits=limits)
    async with open_bot_process(other):
        await trio.sleep(0.5)  # the flood is under way, its burst spent
        before, started = _cpu(), trio.current_time()
        async with open_bot_process(victim) as process:
            data = b""
            while chunk := await process.receive_some(1 << 20,
                                                      deadline=trio.current_time() + 60):
                data += chunk
        cpu = (_cpu() - before) / (trio.current_time() - started)
    return json.loads(data), cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--sandbox", action="store_true")
    args = parser.parse_args()
    sandbox = Sandbox() if args.sandbox else None
    times: dict[str, list[float]] = {"quiet": [], "flood": []}
    cpus: dict[str, list[float]] = {"quiet": [], "flood": []}
    for round_ in range(args.rounds):
        for mode in ("quiet", "flood") if round_ % 2 == 0 else ("flood", "quiet"):
            seen, cpu = trio.run(phase, mode, args.seconds, sandbox)
            times[mode] += seen
            cpus[mode].append(cpu)
            print(f"round {round_ + 1} {mode}: median {statistics.median(seen):.0f} µs,"
                  f" referee CPU {cpu * 100:.1f}%", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    summary = {mode: (statistics.median(times[mode]),
                      statistics.quantiles(times[mode], n=100)[98],
                      statistics.median(cpus[mode]) * 100) for mode in times}
    (qm, qp, qc), (fm, fp, fc) = summary["quiet"], summary["flood"]
    print(f"sysinfo flood: victim's answer median {qm:.0f} -> {fm:.0f} µs, p99 {qp:.0f}"
          f" -> {fp:.0f} µs, referee CPU {qc:.1f}% -> {fc:.1f}% (quiet -> flooded)")


if __name__ == "__main__":
    main()
