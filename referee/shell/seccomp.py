"""The system call filter every local bot runs under: what a bot never needs, denied.

A bot reads its stdin, thinks and writes its stdout; the language runtimes it runs on
start threads and processes, map memory and read files. None of them debug other
processes, hold kernel keys, mount file systems or make namespaces. Those calls are
how a bot would get out of its sandbox or its pid namespace, or read the referee's
secrets, so the filter denies them with ``EPERM`` (a runtime that tries one sees an
ordinary failure; nothing is killed):

* other processes' memory and control: ``ptrace``, ``process_vm_readv``/``writev``,
  ``pidfd_getfd``, ``kcmp``;
* the kernel's key store (the referee's session keyring): ``keyctl``, ``add_key``,
  ``request_key``;
* namespaces and mounts: ``unshare``, ``setns``, ``clone`` with any ``CLONE_NEW*`` flag,
  ``mount``, ``umount2``, ``pivot_root``, ``chroot`` and the new mount API (``fsopen``
  and the rest), so no new user namespace (with its own tmpfs past the sandbox's
  bounds) and no mount;
* ``clone3``, whose flags sit in memory that a filter cannot read, fails with
  ``ENOSYS``: the C libraries then fall back to ``clone``, whose flags it checks;
* the kernel's attack surface and the machine's administration: ``bpf``,
  ``perf_event_open``, ``userfaultfd``, ``kexec_*``, ``*_module``, ``swapon``/``off``,
  ``reboot``, ``acct``, ``quotactl``, ``syslog``, ``open_by_handle_at`` and the like;
* ``personality`` with a flag that weakens the address space's layout
  (``ADDR_NO_RANDOMIZE``, ``ADDR_COMPAT_LAYOUT``, ``READ_IMPLIES_EXEC``,
  ``MMAP_PAGE_ZERO``, ``ADDR_LIMIT_*``), in any persona but the query ``0xffffffff``,
  and the ``TIOCSTI`` ioctl (typing into a terminal).

Channels between two sandboxed bots of one game, through what the kernel shares (in
the sandbox's filter only: contained bots share the host's files anyway):

* locks on a file both can open (``/etc/passwd``): ``flock`` and ``fcntl``'s lock
  commands succeed without taking any lock, so none is ever seen (a runtime that
  locks a file of its own, a build cache, goes on unharmed: nobody else shares its
  sandbox's files); leases and directory notifications (``F_SETLEASE``,
  ``F_NOTIFY``) and ``inotify``/``fanotify`` are denied;
* the page cache of shared files: ``fadvise`` does nothing (no dropping a page for
  the other to notice), ``preadv2``/``pwritev2`` with ``RWF_NOWAIT`` fail with
  ``EOPNOTSUPP``, ``io_uring`` and the kernel's AIO fail with ``ENOSYS`` (runtimes
  fall back to threads), as ``cachestat`` does.

``sysinfo`` is not denied (glibc answers ``sysconf(_SC_PHYS_PAGES)`` with it and uses
the answer unchecked, so the JVM and .NET would size their heaps on garbage): a second,
one-rule filter (:func:`notify_program`) hands it to the referee, which answers with
fixed figures (:mod:`referee.shell.sysinfo_notify`).

What it does not deny: timing (``clock_gettime``, the CPUs' load), reading shared
files (whose first read is slower than the next), and every call a program needs to
run.

The filter is built with Debian's libseccomp (``libseccomp2``, the library that
systemd, container runtimes and bubblewrap's own tools use), called through
:mod:`ctypes`: it resolves every call's number for each architecture the machine runs
(x86-64 and its 32-bit and x32 system call tables, so ``int 0x80`` is no way around it)
and compiles the rules to the classic BPF program that ``bwrap --seccomp FD`` loads
right before it starts the bot. The program is built once per referee process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
from collections.abc import Iterable
from typing import Final

import attrs

__all__ = ["LIBRARY_PACKAGE", "SeccompUnavailable", "filter_fd", "filter_program",
           "notify_program", "syscall_number"]

#: The Debian package of the library.
LIBRARY_PACKAGE: Final = "libseccomp2"

#: Denied with EPERM whatever their arguments.
DENIED: Final = (
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    # the kernel's keys
    "keyctl", "add_key", "request_key",
    # namespaces and mounts
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot",
    "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
    "mount_setattr",
    # the kernel's attack surface, the machine's administration
    "bpf", "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "swapon", "swapoff", "reboot",
    "acct", "quotactl", "quotactl_fd", "syslog", "lookup_dcookie", "vhangup",
    "open_by_handle_at", "name_to_handle_at", "uselib", "iopl", "ioperm",
    "nfsservctl", "fanotify_init",
)

# Sandboxed bots only: the channels between two sandboxes. A contained bot shares the
# host's files and network with the others, and its programs may lock their files
# against each other (two copies of a starter kit's ./bot build once): its filter
# keeps these.

#: Denied with EPERM in the sandbox: watching files other processes open.
SANDBOX_DENIED: Final = ("fanotify_mark", "inotify_init", "inotify_init1",
                         "inotify_add_watch")
#: Fail with ENOSYS, as on a kernel without them: runtimes fall back to what they did
#: before. ``clone3`` (its flags sit in memory that a filter cannot read: the C
#: libraries then use ``clone``, whose flags it checks), everywhere; in the sandbox,
#: the kernel's asynchronous I/O, which can ask whether a page of a shared file is in
#: memory without reading it (``RWF_NOWAIT``), and ``cachestat``, which tells it.
ABSENT: Final = ("clone3",)
SANDBOX_ABSENT: Final = ("io_uring_setup", "io_setup", "cachestat")
#: Succeed without doing anything. ``flock``: a lock on a file every bot can open
#: (``/etc/passwd``) is a channel between them; no lock is ever taken, so none is
#: seen. ``fadvise``: dropping a shared file's pages from memory is the other half of
#: a channel (advice may be ignored; programs do not notice).
IGNORED: Final = ("flock", "fadvise64", "fadvise64_64")
#: ``fcntl``'s commands that take a lock (``F_SETLK``, ``F_SETLKW`` and the
#: open-file-description ones), which succeed without doing anything, as ``flock``.
LOCK_COMMANDS: Final = (6, 7, 37, 38)
#: ``fcntl``'s leases and directory notifications (``F_SETLEASE``, ``F_NOTIFY``),
#: denied.
WATCH_COMMANDS: Final = (1024, 1026)
#: ``preadv2``'s and ``pwritev2``'s flag that makes them fail rather than wait for the
#: disk (it tells whether a page is in memory).
RWF_NOWAIT: Final = 0x8

#: ``clone`` with any of these flags (a new mount, cgroup, uts, ipc, user, pid or network
#: namespace) is denied.
CLONE_NAMESPACE_FLAGS: Final = (
    0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
)
ADDR_NO_RANDOMIZE: Final = 0x0040000
#: Persona flags refused: no address randomisation, a page at address 0, the legacy
#: layout, executable reads, a 32- or 3-GiB address space.
PERSONA_FLAGS: Final = (ADDR_NO_RANDOMIZE, 0x0100000, 0x0200000, 0x0400000, 0x0800000,
                        0x8000000)
TIOCSTI: Final = 0x5412

# libseccomp's constants (seccomp.h).
_ACT_ALLOW: Final = 0x7FFF0000
_ACT_ERRNO: Final = 0x00050000
_ACT_NOTIFY: Final = 0x7FC00000
_CMP_MASKED_EQ: Final = 7
_NO_SUCH_CALL: Final = -1
_MORE_ARCHES: Final = {"x86_64": ("x86", "x32")}


class SeccompUnavailable(OSError):
    """libseccomp is missing or refused the filter; the message says which and why."""


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


@attrs.frozen
class _Rule:
    syscall: str
    action: int
    #: (argument index, mask, value): the rule applies when ``arg & mask == value``
    #: for each of them (each argument at most once).
    args: tuple[tuple[int, int, int], ...] = ()


def _errno(code: int) -> int:
    return _ACT_ERRNO | (code & 0xFFFF)


def rules(*, sandboxed: bool = True) -> list[_Rule]:
    """The filter's rules, in the order they are added (the default is to allow);
    ``sandboxed``: with those that close the channels between two sandboxes."""
    out = [_Rule(name, _errno(errno.EPERM)) for name in DENIED]
    out += [_Rule(name, _errno(errno.ENOSYS)) for name in ABSENT]
    out += [_Rule("clone", _errno(errno.EPERM), ((0, flag, flag),))
            for flag in CLONE_NAMESPACE_FLAGS]
    # Every persona flag that weakens the address space's layout, in any persona but
    # the query (0xffffffff: all 32 bits set, which stays allowed). A filter cannot
    # compare one argument twice in a rule, so: the flag set and some other bit clear.
    out += [_Rule("personality", _errno(errno.EPERM), ((0, flag | 1 << bit, flag),))
            for flag in PERSONA_FLAGS for bit in range(32) if not flag & 1 << bit]
    out.append(_Rule("ioctl", _errno(errno.EPERM), ((1, 0xFFFFFFFF, TIOCSTI),)))
    if sandboxed:
        out += _channel_rules()
    return out


def _channel_rules() -> list[_Rule]:
    out = [_Rule(name, _errno(errno.EPERM)) for name in SANDBOX_DENIED]
    out += [_Rule(name, _errno(errno.ENOSYS)) for name in SANDBOX_ABSENT]
    out += [_Rule(name, _errno(0)) for name in IGNORED]
    for name in ("fcntl", "fcntl64"):  # the kernel reads the command as 32 bits
        out += [_Rule(name, _errno(0), ((1, 0xFFFFFFFF, cmd),)) for cmd in LOCK_COMMANDS]
        out += [_Rule(name, _errno(errno.EPERM), ((1, 0xFFFFFFFF, cmd),))
                for cmd in WATCH_COMMANDS]
    out += [_Rule(name, _errno(errno.EOPNOTSUPP), ((5, RWF_NOWAIT, RWF_NOWAIT),))
            for name in ("preadv2", "pwritev2")]
    return out


def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        raise SeccompUnavailable(
            f"the system call filter needs libseccomp, which is not installed: install the"
            f" Debian package {LIBRARY_PACKAGE} (apt-get install {LIBRARY_PACKAGE})"
        ) from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.restype = None
    lib.seccomp_arch_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_arch_resolve_name.restype = ctypes.c_uint32
    lib.seccomp_arch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _check(result: int, what: str) -> None:
    if result < 0:
        raise SeccompUnavailable(f"libseccomp cannot {what}: {os.strerror(-result)}")


def _build(lib: ctypes.CDLL, wanted: Iterable[_Rule]) -> bytes:
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("libseccomp cannot start a filter")
    try:
        for arch in _MORE_ARCHES.get(os.uname().machine, ()):
            token = lib.seccomp_arch_resolve_name(arch.encode())
            result = lib.seccomp_arch_add(ctx, token) if token else 0
            if result not in (0, -errno.EEXIST):
                _check(result, f"add the {arch} architecture")
        for rule in wanted:
            number = lib.seccomp_syscall_resolve_name(rule.syscall.encode())
            if number == _NO_SUCH_CALL:  # unknown to this libseccomp (an older one)
                continue
            # Calls that exist on another architecture of the filter only (umount on
            # x86, not x86-64) have negative pseudo numbers, which libseccomp maps.
            cmps = [_ArgCmp(index, _CMP_MASKED_EQ, mask, value)
                    for index, mask, value in rule.args]
            array = (_ArgCmp * len(cmps))(*cmps)
            result = lib.seccomp_rule_add_array(ctx, rule.action, number, len(cmps), array)
            _check(result, f"filter {rule.syscall}")
        fd = os.memfd_create("taki-referee-seccomp", os.MFD_CLOEXEC)
        try:
            _check(lib.seccomp_export_bpf(ctx, fd), "export the filter")
            os.lseek(fd, 0, os.SEEK_SET)
            chunks = []
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)
    return b"".join(chunks)


@functools.cache
def filter_program(*, sandboxed: bool = True) -> bytes:
    """The filter as a BPF program (what ``bwrap --seccomp`` reads), a sandboxed bot's
    or a contained one's; raises SeccompUnavailable when libseccomp is missing or
    cannot build it."""
    return _build(_library(), rules(sandboxed=sandboxed))


def filter_fd(*, sandboxed: bool = True) -> int:
    """A new descriptor (close-on-exec; the caller passes it on with ``pass_fds`` and
    closes it) from whose start the filter can be read to its end."""
    fd = os.memfd_create("taki-referee-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, filter_program(sandboxed=sandboxed))  # a memfd takes the whole write at once
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


@functools.cache
def notify_program(syscall: str) -> bytes:
    """A filter that allows everything but ``syscall``, which it hands to a supervisor
    (``SECCOMP_RET_USER_NOTIF``), on every architecture the machine runs, as a BPF
    program; raises SeccompUnavailable when libseccomp is missing or cannot build it."""
    return _build(_library(), [_Rule(syscall, _ACT_NOTIFY)])


@functools.cache
def syscall_number(name: str) -> int:
    """The number of the system call ``name`` on this machine's own architecture;
    SeccompUnavailable when libseccomp is missing or does not know it."""
    number = int(_library().seccomp_syscall_resolve_name(name.encode()))
    if number < 0:
        raise SeccompUnavailable(f"libseccomp does not know the system call {name}")
    return number
