"""Hands sysinfo() pointers that the kernel itself would refuse, or would read
differently, to see where the referee (which answers the call: it writes into the
caller's memory as root) writes: prints one JSON line on stdout.

Usage: sysinfo_pointers.py FILE
  FILE: a file this process may read but not write (a host file, say).
  Prints {"shared_file": errno of a call pointed into a read-only shared mapping of
  FILE, "file_same": whether FILE still holds what it held, "private_file": errno of
  a call into a read-only private mapping of FILE, "straddle": errno of a call whose
  buffer runs into an unmapped page, "top": errno of a call whose buffer runs past the
  last user address, "high_bits": {"result": what ``int 0x80`` returned with a
  pointer whose upper 32 bits are set, "low": whether the buffer at its lower 32 bits
  was written, "high": whether the one at the whole 64-bit value was},
  "undumpable": errno of a call once the process made itself undumpable (which keeps
  unprivileged processes of its user out of its memory)}.
"""

import ctypes
import json
import mmap
import sys

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.mmap.restype = ctypes.c_void_p
LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
LIBC.sysinfo.argtypes = [ctypes.c_void_p]
PAGE = 4096
MAP_FIXED_NOREPLACE = 0x100000
MAP_32BIT = 0x40
ANON = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
RW = mmap.PROT_READ | mmap.PROT_WRITE
SIZE = 112  # struct sysinfo on x86-64


def sysinfo_errno(pointer: int) -> int:
    return 0 if LIBC.sysinfo(ctypes.c_void_p(pointer)) == 0 else ctypes.get_errno()


def mapping(length: int, prot: int, flags: int, fd: int = -1, at: int | None = None) -> int:
    address = LIBC.mmap(at, length, prot, flags, fd, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    return int(address)


def file_mappings(path: str) -> dict[str, object]:
    with open(path, "rb") as f:
        before = f.read()
        shared = mapping(PAGE, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno())
        private = mapping(PAGE, mmap.PROT_READ, mmap.MAP_PRIVATE, f.fileno())
    out: dict[str, object] = {"shared_file": sysinfo_errno(shared),
                              "private_file": sysinfo_errno(private)}
    with open(path, "rb") as f:
        out["file_same"] = f.read() == before
    return out


def straddle() -> int:
    """A buffer whose last bytes lie in a page that is not mapped."""
    pages = mapping(2 * PAGE, RW, ANON)
    LIBC.munmap(ctypes.c_void_p(pages + PAGE), PAGE)
    return sysinfo_errno(pages + PAGE - SIZE // 2)


def top() -> int:
    """A buffer in the last user page that runs past the last user address."""
    last = (1 << 47) - 2 * PAGE  # TASK_SIZE is a page below 2**47
    try:
        page = mapping(PAGE, RW, ANON | MAP_FIXED_NOREPLACE, at=last)
    except OSError:
        return -1  # the address is taken (or the kernel refuses it): not tried
    if page != last:
        return -1
    return sysinfo_errno(last + PAGE - SIZE // 2)


def high_bits() -> dict[str, object]:
    """``int 0x80`` with a pointer whose lower 32 bits name one buffer (below 4 GiB)
    and whose whole 64 bits name another: the kernel's 32-bit call uses the lower."""
    low = mapping(PAGE, RW, ANON | MAP_32BIT)
    code = mapping(PAGE, RW | mmap.PROT_EXEC, ANON | MAP_32BIT)
    high = 0
    for _ in range(64):  # a page above 4 GiB whose lower 32 bits are those of low
        candidate = mapping(1 << 33, 0, ANON | 0x4000)
        start = ((candidate + (1 << 32)) & ~((1 << 32) - 1)) | (low & ((1 << 32) - 1))
        if candidate + PAGE <= start <= candidate + (1 << 33) - 2 * PAGE:
            LIBC.mprotect(ctypes.c_void_p(start & ~(PAGE - 1)), 2 * PAGE, RW)
            high = start
            break
    if not high:
        return {"result": None}
    # mov eax, 116; mov rbx, rdi; int 0x80; ret
    program = bytes([0xB8, 116, 0, 0, 0, 0x48, 0x89, 0xFB, 0xCD, 0x80, 0xC3])
    ctypes.memmove(code, program, len(program))
    call = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64)(code)
    result = call(high)
    written = ctypes.string_at(low, 64), ctypes.string_at(high, 64)
    return {"result": result, "low": any(written[0]), "high": any(written[1])}


def main() -> None:
    out = file_mappings(sys.argv[1])
    out.update(straddle=straddle(), top=top(), high_bits=high_bits())
    LIBC.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    out["undumpable"] = sysinfo_errno(ctypes.addressof(ctypes.create_string_buffer(SIZE)))
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
