"""Reads what sysinfo() says about the host, again and again, as a bot that wants to
hear the other bots of its game would (one starts processes or allocates memory, this
one watches the counts): prints one JSON line on stdout.

Usage: sysinfo_probe.py SECONDS [int80]
  Samples sysinfo() for SECONDS (at least 5 samples) and prints
  {"samples": [[totalram, freeram, sharedram, bufferram, totalswap, freeswap, procs,
  load1, load5, load15, mem_unit], ...], "errors": [errno of each failed call],
  "uptime": the last uptime it said, "fault": the errno of a call with a pointer to
  nowhere, "phys_pages": sysconf(_SC_PHYS_PAGES), "page_size": sysconf(_SC_PAGE_SIZE)}.
  ``int80``: through the 32-bit system call table (``int 0x80``), whose struct sysinfo
  has 32-bit fields.
"""

import ctypes
import json
import mmap
import os
import sys
import time

LIBC = ctypes.CDLL(None, use_errno=True)
FIELDS = ("totalram", "freeram", "sharedram", "bufferram", "totalswap", "freeswap",
          "procs")


class SysInfo(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3),
                ("totalram", ctypes.c_ulong), ("freeram", ctypes.c_ulong),
                ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
                ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong),
                ("procs", ctypes.c_ushort), ("pad", ctypes.c_ushort),
                ("totalhigh", ctypes.c_ulong), ("freehigh", ctypes.c_ulong),
                ("mem_unit", ctypes.c_uint), ("_f", ctypes.c_char * 4)]


class SysInfo32(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_int32), ("loads", ctypes.c_uint32 * 3),
                ("totalram", ctypes.c_uint32), ("freeram", ctypes.c_uint32),
                ("sharedram", ctypes.c_uint32), ("bufferram", ctypes.c_uint32),
                ("totalswap", ctypes.c_uint32), ("freeswap", ctypes.c_uint32),
                ("procs", ctypes.c_uint16), ("pad", ctypes.c_uint16),
                ("totalhigh", ctypes.c_uint32), ("freehigh", ctypes.c_uint32),
                ("mem_unit", ctypes.c_uint32), ("_f", ctypes.c_char * 8)]


def native() -> tuple[int, ctypes.Structure]:
    info = SysInfo()
    result = LIBC.sysinfo(ctypes.byref(info))
    return (ctypes.get_errno() if result != 0 else 0), info


def int80_caller() -> "ctypes._CFuncPtr":
    """A function, in memory below 4 GiB, that calls sysinfo (116 on i386) through
    ``int 0x80`` with its argument and returns the kernel's result."""
    mmap_ = LIBC.mmap
    mmap_.restype = ctypes.c_void_p
    mmap_.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
    page = mmap_(None, 4096, mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC,
                 mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40, -1, 0)  # MAP_32BIT
    # mov eax, 116; mov ebx, edi; int 0x80; ret
    code = bytes([0xB8, 116, 0, 0, 0, 0x89, 0xFB, 0xCD, 0x80, 0xC3])
    ctypes.memmove(page, code, len(code))
    return ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(page)


def main() -> None:
    seconds = float(sys.argv[1])
    call = None
    if sys.argv[2:] == ["int80"]:
        caller = int80_caller()
        buffer = ctypes.cast(ctypes.c_void_p(caller_data := LIBC.mmap(
            None, 4096, mmap.PROT_READ | mmap.PROT_WRITE,
            mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40, -1, 0)),
            ctypes.POINTER(SysInfo32))

        def call() -> tuple[int, ctypes.Structure]:
            result = caller(caller_data)
            return (-result if result < 0 else 0), buffer.contents
    samples, errors, uptime = [], [], None
    end = time.monotonic() + seconds
    while len(samples) + len(errors) < 5 or time.monotonic() < end:
        error, info = call() if call is not None else native()
        if error:
            errors.append(error)
        else:
            samples.append([*(int(getattr(info, f)) for f in FIELDS), *info.loads,
                            int(info.mem_unit)])
            uptime = int(info.uptime)
        time.sleep(0.02)
    fault = 0 if LIBC.sysinfo(ctypes.c_void_p(8)) == 0 else ctypes.get_errno()
    print(json.dumps({"samples": samples, "errors": errors, "uptime": uptime,
                      "fault": fault,
                      "phys_pages": os.sysconf("SC_PHYS_PAGES"),
                      "page_size": os.sysconf("SC_PAGE_SIZE")}), flush=True)


if __name__ == "__main__":
    main()
