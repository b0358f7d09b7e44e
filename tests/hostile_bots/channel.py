"""One end of a covert channel between two bots of one game, which each see only their
own sandbox: the sender passes bits (a hand, say) and the receiver reads them, through
something both can reach. Not a protocol bot: the harness (tests/shell/
test_sandbox_channels.py, benchmarks/channels.py) starts a pair and compares the bits.

Usage: channel.py send|recv CHANNEL START SLOT_MS BITS
  CHANNEL  flock     a lock on this script's own file (flock), held for a 1
           fcntl     a byte-range lock on this script's own file (fcntl), held for a 1
           inotify   the sender opens a file that the receiver watches, for a 1
           loadavg   the sender starts threads, the receiver reads /proc/loadavg
           sysinfo   the same, read with the sysinfo() system call
           cpu       the sender keeps every CPU busy, the receiver counts its loops
  START    the wall-clock time (seconds since the epoch) the first slot begins: both
           ends share the clock
  SLOT_MS  how long each bit lasts
  BITS     the sender: the bits to send ("0110..."); the receiver: how many to read

The receiver prints the bits it read on stdout (or ``denied: WHY`` when the channel
cannot even be opened); the sender prints ``sent``.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import select
import statistics
import struct
import sys
import threading
import time
from collections.abc import Callable

#: A file both ends can open read-only: the script itself. A harness that copies it into a
#: folder of its own keeps other programs' locks (and other pairs') out of the channel.
SHARED = os.path.abspath(__file__)
WATCHED = "/etc/ld.so.conf"  # read by ldconfig alone: no noise from the host
THREADS = 24


def slots(start: float, slot_s: float, count: int) -> list[tuple[float, float]]:
    return [(start + i * slot_s, start + (i + 1) * slot_s) for i in range(count)]


def sleep_until(when: float) -> None:
    while (left := when - time.time()) > 0:
        time.sleep(min(left, 0.05))


# The sender's ways of saying 1 (between begin and end); a 0 is silence.

def hold_flock(end: float) -> None:
    with open(SHARED, "rb") as f:
        fcntl.flock(f, fcntl.LOCK_SH)
        sleep_until(end)


def hold_fcntl(end: float) -> None:
    with open(SHARED, "rb") as f:
        fcntl.fcntl(f, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))
        sleep_until(end)


def touch_watched(end: float) -> None:
    while time.time() < end - 0.001:
        with open(WATCHED, "rb") as f:
            f.read(1)
        time.sleep(0.0005)


def start_threads(end: float) -> None:
    stop = threading.Event()
    threads = [threading.Thread(target=stop.wait) for _ in range(THREADS)]
    for t in threads:
        t.start()
    sleep_until(end - 0.002)
    stop.set()
    for t in threads:
        t.join()


def spin(end: float) -> None:
    children = [os.fork() for _ in range(max(1, (os.cpu_count() or 1)) - 1)]
    x = 0
    while time.time() < end:
        x += 1
    if 0 in children:
        os._exit(0)
    for pid in children:
        os.waitpid(pid, 0)


SENDERS: dict[str, Callable[[float], None]] = {
    "flock": hold_flock, "fcntl": hold_fcntl, "inotify": touch_watched,
    "loadavg": start_threads, "sysinfo": start_threads, "cpu": spin,
}


# The receiver's probes: a number per slot, thresholded afterwards.

def probe_flock(begin: float, end: float) -> float:
    with open(SHARED, "rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 1.0
        fcntl.flock(f, fcntl.LOCK_UN)
        return 0.0


def probe_fcntl(begin: float, end: float) -> float:
    with open(SHARED, "rb") as f:
        got = fcntl.fcntl(f, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))
        return 0.0 if struct.unpack("hhqqi", got)[0] == fcntl.F_UNLCK else 1.0


class Inotify:
    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if libc.inotify_add_watch(self.fd, WATCHED.encode(), 0x20 | 0x1) < 0:  # OPEN|ACCESS
            raise OSError(ctypes.get_errno(), "inotify_add_watch")

    def probe(self, begin: float, end: float) -> float:
        events = 0
        while (left := end - time.time()) > 0:
            if select.select([self.fd], [], [], left)[0]:
                with contextlib.suppress(BlockingIOError):
                    events += len(os.read(self.fd, 65536)) > 0
        return float(events)


def nr_threads_loadavg() -> int:
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[1])


class _SysInfo(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3),
                ("totalram", ctypes.c_ulong), ("freeram", ctypes.c_ulong),
                ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
                ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong),
                ("procs", ctypes.c_ushort), ("pad", ctypes.c_char * 22)]


def nr_threads_sysinfo() -> int:
    info = _SysInfo()
    if ctypes.CDLL(None, use_errno=True).sysinfo(ctypes.byref(info)) != 0:
        raise OSError(ctypes.get_errno(), "sysinfo")
    return int(info.procs)


def sampling(read: Callable[[], int]) -> Callable[[float, float], float]:
    def probe(begin: float, end: float) -> float:
        sleep_until(begin + (end - begin) * 0.4)
        return float(statistics.median(read() for _ in range(5)))
    return probe


def probe_cpu(begin: float, end: float) -> float:
    sleep_until(begin + (end - begin) * 0.1)
    stop = begin + (end - begin) * 0.9
    loops = 0
    while time.time() < stop:
        loops += 1
    return -float(loops)  # fewer loops: the CPUs were busy, a 1


def receiver(channel: str) -> Callable[[float, float], float]:
    if channel == "flock":
        return probe_flock
    if channel == "fcntl":
        return probe_fcntl
    if channel == "inotify":
        return Inotify().probe
    if channel == "loadavg":
        return sampling(nr_threads_loadavg)
    if channel == "sysinfo":
        nr_threads_sysinfo()
        return sampling(nr_threads_sysinfo)
    return probe_cpu


def threshold(values: list[float]) -> str:
    """Bits from the values of the slots: above the midpoint of the two clusters."""
    low, high = min(values), max(values)
    if high == low:
        return "0" * len(values)
    cut = (low + high) / 2
    for _ in range(20):  # two-means in one dimension
        ones = [v for v in values if v > cut] or [high]
        zeros = [v for v in values if v <= cut] or [low]
        cut = (statistics.mean(ones) + statistics.mean(zeros)) / 2
    return "".join("1" if v > cut else "0" for v in values)


def main() -> None:
    role, channel, start, slot_ms, bits = sys.argv[1:6]
    slot_s = int(slot_ms) / 1000
    if role == "send":
        for bit, (begin, end) in zip(bits, slots(float(start), slot_s, len(bits)), strict=True):
            sleep_until(begin)
            if bit == "1":
                with contextlib.suppress(OSError):
                    SENDERS[channel](end)
        print("sent", flush=True)
        return
    try:
        probe = receiver(channel)
    except OSError as exc:
        print(f"denied: {exc}", flush=True)
        return
    values = []
    for begin, end in slots(float(start), slot_s, int(bits)):
        sleep_until(begin + 0.2 * slot_s if channel in ("flock", "fcntl") else begin)
        values.append(probe(begin, end))
        sleep_until(end)
    print(threshold(values), flush=True)


main()
