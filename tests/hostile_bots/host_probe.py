"""Plays like a random bot after trying, at its first request, to reach the host's
kernel settings and secrets. When the attempt succeeds it answers out of range (an
``illegal`` forfeit tells the test); when it fails it plays on. Says what happened on
stderr.

Usage: host_probe.py MODE [ARG...]
  sysctl       write vm.swappiness and kernel.core_pattern (each its current value:
               nothing changes), and /proc/sysrq-trigger (an unknown key, which the
               kernel ignores)
  personality  turn off address randomisation with personality(), with and without
               the top bit, then check the query still works
  keys         read /proc/keys (root's key names) and /proc/key-users
  devices      open /dev/userfaultfd, find /dev/tty0
  inodes N     create N empty files in /tmp
  file =PATH   read a file named after "=" (not a word of the command)
  logdir       put a file where the referee's log folder (./logs) is
"""

import ctypes
import os
import sys

from _common import Bot, play
from taki_protocol import Request

MODE, ARGS = sys.argv[1], sys.argv[2:]
LIBC = ctypes.CDLL(None, use_errno=True)


def say(text: str) -> None:
    print(f"host-probe {MODE}: {text}", file=sys.stderr, flush=True)


def rewrite(path: str, data: bytes | None = None) -> bool:
    try:
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
        with open(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        say(f"cannot write {path}: {exc.strerror}")
        return False
    say(f"wrote {path}")
    return True


def sysctl() -> bool:
    with open("/proc/self/uid_map") as f:
        say("uid_map " + " | ".join(line.split().__str__() for line in f))
    wrote = [rewrite("/proc/sys/vm/swappiness"), rewrite("/proc/sys/kernel/core_pattern"),
             rewrite("/proc/sysrq-trigger", b"_")]
    return any(wrote)


def personality() -> bool:
    LIBC.personality.argtypes = [ctypes.c_ulong]
    accepted = False
    for persona in (0x0040000, 0x80040000, 0x0200000, 0xFFFE0000 | 0x0040000):
        if LIBC.personality(persona) != -1:
            say(f"personality({persona:#x}) accepted")
            accepted = True
        else:
            say(f"personality({persona:#x}) refused: {os.strerror(ctypes.get_errno())}")
    if LIBC.personality(0xFFFFFFFF) == -1:
        say("the query was refused")
        return True
    return accepted


def keys() -> bool:
    seen = False
    for path in ("/proc/keys", "/proc/key-users"):
        try:
            with open(path) as f:
                text = f.read()
        except OSError as exc:
            say(f"cannot read {path}: {exc.strerror}")
            continue
        say(f"{path}: {len(text.splitlines())} lines")
        seen = seen or bool(text.strip())
    return seen


def devices() -> bool:
    found = False
    try:
        os.close(os.open("/dev/userfaultfd", os.O_RDWR))
    except OSError as exc:
        say(f"no userfaultfd: {exc.strerror}")
    else:
        say("opened /dev/userfaultfd")
        found = True
    if os.path.exists("/dev/tty0"):
        say("/dev/tty0 is there")
        found = True
    return found


def inodes() -> bool:
    wanted = int(ARGS[0])
    made = 0
    try:
        for i in range(wanted):
            os.close(os.open(f"/tmp/inode-{i}", os.O_CREAT | os.O_WRONLY, 0o600))
            made += 1
    except OSError as exc:
        say(f"made {made} files, then: {exc.strerror}")
        return False
    say(f"made all {made} files")
    return True


def read_file() -> bool:
    path = ARGS[0].removeprefix("=")
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as exc:
        say(f"cannot read {path}: {exc.strerror}")
        return False
    say(f"read {path}")
    return True


def logdir() -> bool:
    import shutil

    try:
        shutil.rmtree("logs")
        with open("logs", "w") as f:
            f.write("not a folder")
    except OSError as exc:
        say(f"cannot replace logs: {exc.strerror}")
        return False
    say("replaced logs with a file")
    return False  # plays on: the referee's next start finds the file


MODES = {"logdir": logdir, "sysctl": sysctl, "personality": personality, "keys": keys,
         "devices": devices, "inodes": inodes, "file": read_file}


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests == 1 and MODES[MODE]():
        bot.answer(request, choice=len(request.legal) + 998)
        return True
    return False


play(f"host-probe-{MODE}", hook)
