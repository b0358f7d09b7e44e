"""Run by tests/shell/test_sandbox_unprivileged.py as an unprivileged user (with the
system's Python and a copy of the referee readable by others): starts sandboxed bots
through the referee's own ``open_bot_process``, as a referee run by that user would,
and prints on stdout one JSON object of what they saw.

Usage: sandbox_as_nobody.py HOSTILE_BOTS_DIR
  host_uids    the host uids of a sandboxed bot's processes, as the host sees them
  sysctl       what writing /proc/sys/vm/swappiness (its own value) gave
  flock/fcntl  [sent, received] of a pair of channel.py bots, 48 bits in 40 ms slots
  sysinfo      what sysinfo_probe.py saw, with a memory limit of 256 MiB
  pointers     what sysinfo_pointers.py saw (its own script as the file)
  inodes       [files made, why it stopped] in a /tmp of 1 MiB (at most 5,000 files)
  inodes_run   the same with /run bound in (whose tmpfs is then bwrap's)
  inodes_shm   the same in /dev/shm
  run          what a sandboxed bot finds at /run: its entries, or why none
  mounts       [before, after]: the lines of the host's mount table (this process's)
               before the first bot and after the last
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

import trio

from referee.core import BotCommand, ResourceLimits, Sandbox
from referee.shell.spawn import open_bot_process

HOSTILE = Path(sys.argv[1])
BITS = 48
START_S = 3.0
INSIDE = """
import errno
print(open("/proc/self/uid_map").read().split())
try:
    with open("/proc/sys/vm/swappiness", "r+") as f:
        f.write(f.read())
    print("written")
except OSError as exc:
    print(errno.errorcode[exc.errno])
"""


async def output(command: BotCommand, seconds: float = 60) -> str:
    async with open_bot_process(command) as process:
        out = b""
        deadline = trio.current_time() + seconds
        while chunk := await process.receive_some(1 << 16, deadline=deadline):
            out += chunk
        return out.decode().strip()


FILES = """
import os, sys
made = 0
try:
    while made < 5000:
        open(f"{sys.argv[1]}/f{made}", "w").close()
        made += 1
    print(made, "none")
except OSError as exc:
    print(made, exc.strerror)
"""


async def host_uids() -> list[int]:
    """The uids the host sees on the processes of a sandboxed bot (its bwrap's too)."""
    marker = f"taki-unprivileged-{os.getpid()}"
    code = f"import time; print('up', flush=True); time.sleep(60)  # {marker}"
    command = BotCommand((sys.executable, "-c", code), sandbox=Sandbox())
    uids: set[int] = set()
    async with open_bot_process(command) as process:
        await process.receive_some(16, deadline=trio.current_time() + 60)
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if marker.encode() not in f.read():
                        continue
                with open(f"/proc/{pid}/status") as f:
                    uids |= {int(u) for line in f if line.startswith("Uid:")
                             for u in line.split()[1:]}
            except OSError:
                continue
    return sorted(uids)


async def pair(channel: str) -> list[str]:
    bits = "".join(random.choice("01") for _ in range(BITS))
    start = time.time() + START_S

    def command(role: str, what: str) -> BotCommand:
        return BotCommand((sys.executable, str(HOSTILE / "channel.py"), role, channel,
                           f"{start:.3f}", "40", what), sandbox=Sandbox())

    got: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(output, command("send", bits))

        async def receive() -> None:
            got.append(await output(command("recv", str(BITS))))
        nursery.start_soon(receive)
    return [bits, got[0]]


RUN = """
import os
try:
    print(sorted(os.listdir("/run")))
except OSError as exc:
    print(exc.strerror)
"""


def mounts() -> int:
    with open("/proc/self/mountinfo") as f:
        return len(f.readlines())


async def main() -> None:
    seen: dict[str, object] = {}
    before = mounts()
    seen["host_uids"] = await host_uids()
    _uid_map, seen["sysctl"] = (await output(BotCommand((sys.executable, "-c", INSIDE),
                                                        sandbox=Sandbox()))).splitlines()
    for channel in ("flock", "fcntl"):
        seen[channel] = await pair(channel)
    probe = BotCommand((sys.executable, str(HOSTILE / "sysinfo_probe.py"), "2"),
                       sandbox=Sandbox(), limits=ResourceLimits(memory_mb=256))
    seen["sysinfo"] = json.loads(await output(probe))
    pointers = str(HOSTILE / "sysinfo_pointers.py")
    seen["pointers"] = json.loads(await output(BotCommand((sys.executable, pointers, pointers),
                                                          sandbox=Sandbox())))
    for key, binds, where in (("inodes", (), "/tmp"), ("inodes_run", ("/run",), "/tmp"),
                              ("inodes_shm", (), "/dev/shm")):
        made, why = (await output(BotCommand((sys.executable, "-c", FILES, where),
                                             sandbox=Sandbox(tmp_mb=1, binds=binds))
                                  )).split(" ", 1)
        seen[key] = [int(made), why]
    seen["run"] = await output(BotCommand((sys.executable, "-c", RUN), sandbox=Sandbox()))
    seen["mounts"] = [before, mounts()]
    print(json.dumps(seen), flush=True)


trio.run(main)
