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
  ipc KEY      make a SysV shared memory segment with KEY (hex), and leave it
  caps         have any capability
  pagecache    ask whether a page of a shared file is in memory without reading it
               (preadv2 with RWF_NOWAIT), or set up io_uring
  frozen       read /proc's host-wide counters twice, a second apart: do they move?
"""

import ctypes
import os
import shutil
import sys
import threading
import time

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
    if os.path.exists("/sys/kernel"):
        say("sees /sys")
        wrote.append(True)
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
    try:
        shutil.rmtree("logs")
        with open("logs", "w") as f:
            f.write("not a folder")
    except OSError as exc:
        say(f"cannot replace logs: {exc.strerror}")
        return False
    say("replaced logs with a file")
    return False  # plays on: the referee's next start finds the file


def ipc() -> bool:
    LIBC.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    if LIBC.shmget(int(ARGS[0], 16), 4096, 0o1000 | 0o600) < 0:  # IPC_CREAT
        say(f"no segment: {os.strerror(ctypes.get_errno())}")
    else:
        say("made a segment")
    return False  # the test looks for it on the host afterwards


def caps() -> bool:
    with open("/proc/self/status") as f:
        found = [line.split() for line in f if line.startswith(("CapEff", "CapPrm"))]
    say(f"capabilities {found}")
    return any(int(value, 16) for _, value in found)


def pagecache() -> bool:
    got_through = False
    with open("/etc/passwd", "rb") as f:
        try:
            os.preadv(f.fileno(), [bytearray(16)], 0, os.RWF_NOWAIT)
        except OSError as exc:
            say(f"preadv2 with RWF_NOWAIT: {exc.strerror}")
        else:
            say("preadv2 with RWF_NOWAIT answered")
            got_through = True
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)  # must not fail
    LIBC.syscall.restype = ctypes.c_long
    params = ctypes.create_string_buffer(120)
    fd = LIBC.syscall(425, 4, params)  # io_uring_setup(4 entries)
    if fd >= 0:
        say("io_uring_setup answered")
        os.close(fd)
        got_through = True
    else:
        say(f"io_uring_setup: {os.strerror(ctypes.get_errno())}")
    return got_through


def frozen() -> bool:
    paths = ["/proc/loadavg", "/proc/meminfo", "/proc/stat", "/proc/vmstat", "/proc/uptime",
             "/proc/interrupts", "/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr"]

    def read_all() -> list[bytes]:
        out = []
        for path in paths:
            with open(path, "rb") as f:
                out.append(f.read())
        return out

    before = read_all()
    stop = threading.Event()
    threads = [threading.Thread(target=stop.wait) for _ in range(20)]
    for t in threads:
        t.start()
    block = b"\1" * (64 << 20)
    time.sleep(1.5)
    after = read_all()
    stop.set()
    del block
    moved = [p for p, a, b in zip(paths, before, after, strict=True) if a != b]
    say(f"moved: {moved}")
    return bool(moved)


MODES = {"logdir": logdir, "ipc": ipc, "caps": caps, "pagecache": pagecache,
         "frozen": frozen, "sysctl": sysctl, "personality": personality, "keys": keys,
         "devices": devices, "inodes": inodes, "file": read_file}


def hook(bot: Bot, request: Request) -> bool:
    if bot.requests == 1 and MODES[MODE]():
        bot.answer(request, choice=len(request.legal) + 998)
        return True
    return False


play(f"host-probe-{MODE}", hook)
