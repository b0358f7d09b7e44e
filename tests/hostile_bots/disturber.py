"""A third process beside two bots of one game: it starts PROCESSES processes that live
0.2 s and touches MIB MiB of memory, again and again, until it is killed - the host-wide
figures (processes, free memory) a covert channel would read move all the time.

Usage: disturber.py PROCESSES MIB
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    processes, mib = int(sys.argv[1]), int(sys.argv[2])
    while True:
        for _ in range(processes):
            if os.fork() == 0:
                time.sleep(0.2)
                os._exit(0)
        block = bytearray(mib << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(0.1)
        del block
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


if __name__ == "__main__":
    main()
