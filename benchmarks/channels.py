"""How fast two bots of one game can pass each other bits, sandboxed, through what they
share: a hostile pair (tests/hostile_bots/channel.py) sends random bits through each
channel in time slots, and the bandwidth is the capacity of what arrives (a binary
symmetric channel: ``(1 - H(error rate)) / slot``), for this tree and an anchor commit
(the landed referee before the channels were closed), alternating, in one run.

Channels: ``flock`` and ``fcntl`` (locks on /etc/passwd), ``inotify`` (a watched file
the other opens), ``loadavg`` (threads counted in /proc/loadavg), ``sysinfo`` (the same
count through the sysinfo() call, which the referee now answers with fixed figures)
and ``cpu`` (one keeps the CPUs busy, the other counts its loops). The slot of each is
fixed (below), so the figures are lower bounds of what a tighter protocol would get; a
channel that is closed reads nothing (0 bit/s) at any slot.

What closing them costs a bot's start: ``--start-rounds N`` (0: none) rounds, anchor
and tree alternating, each timing 5 starts of a bot (``python -c "print(1)"``, from the
spawn to its line on stdout), sandboxed and contained; the medians are printed.

Run from the repository root: ``.venv/bin/python benchmarks/channels.py
[--anchor 6a3ce84] [--rounds 3] [--start-rounds 0]``. Last line: ``channels (bit/s,
anchor -> tree): ...``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANNEL = ROOT / "tests" / "hostile_bots" / "channel.py"
#: Each channel's slot in milliseconds and bits per run.
SLOTS = {"flock": (5, 200), "fcntl": (5, 200), "inotify": (40, 100), "loadavg": (20, 100),
         "sysinfo": (20, 100), "cpu": (100, 60)}
START_S = 4.0


def capacity(sent: str, got: str, slot_ms: int) -> float:
    """Bits per second of a binary symmetric channel with the observed error rate."""
    if len(got) != len(sent):
        return 0.0
    p = sum(a != b for a, b in zip(sent, got, strict=True)) / len(sent)
    p = min(p, 1 - p)
    entropy = 0.0 if p == 0 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
    return max(0.0, 1 - entropy) * 1000 / slot_ms


def pair(channel: str) -> dict[str, str]:
    """Run one sandboxed pair with the ``referee`` this interpreter imports."""
    import trio

    from referee.core import BotCommand, ResourceLimits, Sandbox
    from referee.shell.spawn import open_bot_process

    slot_ms, count = SLOTS[channel]
    bits = "".join(random.choice("01") for _ in range(count))
    start = time.time() + START_S

    def command(role: str, what: str) -> BotCommand:
        return BotCommand((sys.executable, str(CHANNEL), role, channel, f"{start:.3f}",
                           str(slot_ms), what), sandbox=Sandbox(),
                          limits=ResourceLimits(pids=128))

    async def output(cmd: BotCommand, out: list[str]) -> None:
        deadline = trio.current_time() + START_S + count * slot_ms / 1000 + 30
        async with open_bot_process(cmd) as process:
            data = b""
            while chunk := await process.receive_some(1 << 16, deadline=deadline):
                data += chunk
            out.append(data.decode().strip())

    async def both() -> str:
        got: list[str] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(output, command("send", bits), [])
            nursery.start_soon(output, command("recv", str(count)), got)
        return got[0]

    return {"sent": bits, "got": trio.run(both)}


STARTS = 5


def starts() -> dict[str, float]:
    """Median milliseconds of :data:`STARTS` starts of a bot, sandboxed and contained,
    with the ``referee`` this interpreter imports."""
    import trio

    from referee.core import BotCommand, Sandbox
    from referee.shell.spawn import open_bot_process

    async def once(sandbox: Sandbox | None) -> float:
        begin = time.perf_counter()
        command = BotCommand((sys.executable, "-c", "print(1)"), sandbox=sandbox)
        async with open_bot_process(command) as process:
            await process.receive_some(16, deadline=trio.current_time() + 60)
        return (time.perf_counter() - begin) * 1000

    async def all_of() -> dict[str, float]:
        out = {}
        for how, sandbox in (("sandboxed", Sandbox()), ("contained", None)):
            await once(sandbox)  # warm: the filters are built once per process
            out[how] = statistics.median([await once(sandbox) for _ in range(STARTS)])
        return out

    return trio.run(all_of)


def in_tree(tree: Path, *args: str) -> str:
    """The last line this script prints, run with ``args`` against ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, __file__, *args], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed in {tree}:\n{done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1]


def run_pair(tree: Path, channel: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, __file__, "--pair", channel], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the pair failed in {tree}:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return capacity(result["sent"], result["got"], SLOTS[channel][0])


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchor", default="6a3ce84")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--channels", nargs="*", default=list(SLOTS))
    parser.add_argument("--start-rounds", type=int, default=0)
    parser.add_argument("--pair", help=argparse.SUPPRESS)
    parser.add_argument("--starts", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pair:
        print(json.dumps(pair(args.pair)))
        return
    if args.starts:
        print(json.dumps(starts()))
        return
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from anchor import checked_out

    print(f"load average before: {load()}")
    figures: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch, \
            checked_out(args.anchor, Path(scratch) / "anchor") as anchor:
        sides = {"anchor": anchor, "tree": ROOT}
        timed: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.start_rounds):
            for side, tree in sides.items():
                for how, ms in json.loads(in_tree(tree, "--starts")).items():
                    timed.setdefault((how, side), []).append(ms)
        for _ in range(args.rounds):
            for channel in args.channels:
                for side, tree in sides.items():
                    figures.setdefault((channel, side), []).append(run_pair(tree, channel))
    print(f"load average after: {load()}")
    if timed:
        print("bot start (ms, medians of " + f"{args.start_rounds} rounds): " + "; ".join(
            f"{how} {statistics.median(timed[(how, 'anchor')]):.1f} -> "
            f"{statistics.median(timed[(how, 'tree')]):.1f}"
            for how in ("sandboxed", "contained")))
    print(f"{'channel':<8} {'slot':>6} {'anchor bit/s':>13} {'tree bit/s':>11}"
          f"  (medians of {args.rounds} runs)")
    summary = []
    for channel in args.channels:
        before = statistics.median(figures[(channel, "anchor")])
        after = statistics.median(figures[(channel, "tree")])
        print(f"{channel:<8} {SLOTS[channel][0]:>4}ms {before:>13.1f} {after:>11.1f}")
        summary.append(f"{channel} {before:.0f} -> {after:.0f}")
    print(f"channels (bit/s, anchor -> tree): {'; '.join(summary)}")


if __name__ == "__main__":
    main()
