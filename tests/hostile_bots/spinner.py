"""An honest bot that spins on the CPU for SHARE percent (default 80) of each request's
limit before it answers: beside enough busy processes it gets too little of a CPU and
times out through no fault of its own; with a share above 100 it overruns. With
"nice" as a second argument it first lowers its own priority (its nice value, and its
session's autogroup where the kernel groups sessions).

Usage: spinner.py [SHARE] [nice]
"""

import contextlib
import os
import sys
import time

from _common import Bot, arg, play
from taki_protocol import Request

SHARE = arg(1, 80) / 100
if sys.argv[2:3] == ["nice"]:
    os.nice(19)
    with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as group:
        group.write("19")


def hook(bot: Bot, request: Request) -> bool:
    until = time.process_time() + SHARE * request.deadline_ms / 1000
    while time.process_time() < until:
        pass
    return False


play("spinner", hook)
