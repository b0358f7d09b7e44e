"""Plays like a random bot after trying, at its first request, to do what a sandbox must
stop. When the attempt succeeds it answers out of range (an ``illegal`` forfeit tells the
test); when it fails it plays on. Says what happened on stderr.

Usage: sandbox_probe.py MODE [ARG...]
  read =PATH...   read any of these files (each path after a "=", so that the sandbox
                  does not take it for a file of the bot's own)
  connect PORT    open a TCP connection to 127.0.0.1:PORT
  tmp =PATH       find PATH (in /tmp) left by an earlier process, then leave it
  proc            see the referee's guard or the test process (their command lines)
  alloc MB        allocate and touch MB MiB (a memory limit kills it: a crash)
  fork N          fork N children that sleep (a process limit makes forks fail)
  escape          kill every process it can see, start three children in sessions of
                  their own that sleep, then think for a minute
  report =PATH... say whether it runs sandboxed (its host name, its pid, how many
                  processes it sees, what sysinfo() says) and whether it can read each
                  PATH, then play on
"""

import contextlib
import ctypes
import os
import signal
import socket
import sys
import time

from _common import Bot, play
from taki_protocol import Request

MODE, ARGS = sys.argv[1], sys.argv[2:]


def say(text: str) -> None:
    print(f"sandbox-probe {MODE}: {text}", file=sys.stderr, flush=True)


def read_any() -> bool:
    for path in (arg.removeprefix("=") for arg in ARGS):
        try:
            with open(path, "rb") as f:
                f.read(1)
        except OSError as exc:
            say(f"cannot read {path}: {exc.strerror}")
        else:
            say(f"read {path}")
            return True
    return False


def connect() -> bool:
    try:
        socket.create_connection(("127.0.0.1", int(ARGS[0])), timeout=1).close()
    except OSError as exc:
        say(f"cannot connect: {exc}")
        return False
    say("connected")
    return True


def tmp() -> bool:
    marker = ARGS[0].removeprefix("=")
    found = os.path.exists(marker)
    with open(marker, "w") as f:
        f.write(str(os.getpid()))
    say("found an earlier process's file" if found else "no earlier file")
    return found


def proc() -> bool:
    # The guard's script (referee.shell.guard) and the tests' own process.
    needles = ("read -r group", "pytest")
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    line = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if any(needle in line for needle in needles):
                say(f"sees {pid}: {line}")
                return True
    say("sees nobody")
    return False


def alloc() -> bool:
    block = b"\1" * (int(ARGS[0]) << 20)
    say(f"allocated {len(block) >> 20} MiB")
    return False


def fork() -> bool:
    made = failed = 0
    for _ in range(int(ARGS[0])):
        try:
            pid = os.fork()
        except OSError:
            failed += 1
            continue
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        made += 1
    say(f"forked {made}, {failed} forks failed")
    return False


def escape() -> bool:
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) not in (me, 1):
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)
    for _ in range(3):
        if os.fork() == 0:
            os.setsid()
            time.sleep(120)
            os._exit(0)
    say("forked three children in sessions of their own")
    time.sleep(60)  # the test kills the referee meanwhile
    return False


def report() -> bool:
    seen = sum(1 for pid in os.listdir("/proc") if pid.isdigit())
    say(f"host {socket.gethostname()}, pid {os.getpid()}, sees {seen} processes")
    info = (ctypes.c_ulong * 16)()  # struct sysinfo: 112 bytes
    ctypes.CDLL(None).sysinfo(info)
    say(f"sysinfo: {info[10] & 0xFFFF} processes, load {info[1]}, free {info[5]} of {info[4]}")
    for path in (arg.removeprefix("=") for arg in ARGS):
        say(f"{'can' if os.access(path, os.R_OK) else 'cannot'} read {path}")
    return False


#: Each mode's attempt: True when it did what a sandbox must stop.
MODES = {"read": read_any, "connect": connect, "tmp": tmp, "proc": proc, "alloc": alloc,
         "fork": fork, "escape": escape, "report": report}


def escaped() -> bool:
    attempt = MODES.get(MODE)
    if attempt is None:
        raise SystemExit(f"unknown mode {MODE}")
    return attempt()


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests == 1 and escaped():
        bot.answer(request, choice=len(request.legal) + 998)
        return True
    return False


play(f"probe-{MODE}", hook)
