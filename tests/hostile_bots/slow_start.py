"""A bot that computes at its start: it spends MS (default 250) of CPU time before it
answers hello, then plays normally. Beside enough busy processes it is starved during
its start through no fault of its own. With "nice" as a second argument it first
lowers its own priority (its nice value, and its session's autogroup); with "fork" it
first forks COUNT busy loops (4 per CPU) that never end: its own load, not the
machine's. With "spread" it spends the MS over COUNT processes computing at once (4 per
CPU), as a virtual machine's start spreads over its threads, and answers when all are
done: on a busy machine they wait for CPUs together.

Usage: slow_start.py [MS] [nice|fork|spread]
"""

import contextlib
import os
import sys
import time

from _common import arg, play

SPEND_S = arg(1, 250) / 1000
MODE = sys.argv[2] if len(sys.argv) > 2 else ""
if MODE == "nice":
    os.nice(19)
    with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as group:
        group.write("19")
elif MODE == "fork":
    for _ in range(4 * (os.cpu_count() or 1)):
        if os.fork() == 0:
            while True:
                pass
if MODE == "spread":
    COUNT = 4 * (os.cpu_count() or 1)
    workers = []
    for _ in range(COUNT):
        pid = os.fork()
        if pid == 0:
            while time.process_time() < SPEND_S / COUNT:
                pass
            os._exit(0)
        workers.append(pid)
    for pid in workers:
        os.waitpid(pid, 0)
else:
    while time.process_time() < SPEND_S:
        pass
play("slow-start")
