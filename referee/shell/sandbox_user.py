"""Who a sandboxed bot is on the host: never root.

Run by an unprivileged user, bwrap makes the sandbox's user namespace itself and its
user (65534 inside) is the referee's user outside. Run by root, bwrap would map the
sandbox's user to host root: a bot would then pass every permission check that
compares owners (``/proc/sys``, ``/proc/sysrq-trigger`` and every other root-owned file
it can reach are writable without any capability). So when the referee is root, each
sandboxed bot process gets a user namespace made here, with a host user and group of
its own from a fixed range (:data:`FIRST_ID`, :data:`ID_COUNT` of them), and bwrap
joins it (``--userns FD``) instead of making one:

* ``65534`` inside is the bot's own host uid and gid (a new one for every bot process,
  so two bots of one game share no owner);
* host root is mapped too, to uid and gid :data:`HOST_ROOT_INSIDE` (not 0), so that
  bwrap, which switches to 65534 before it mounts anything but keeps its capabilities
  in the namespace, can still bind paths only root can reach (a Python under
  ``/root``, a competition's folders inside a 0711 one);
* uid 0 inside is left unmapped: the switch to 65534 is then no "root to non-root"
  change, which would clear bwrap's capabilities before it mounts.

bwrap drops every capability before it starts the bot, and sets ``no_new_privs``; the
filter denies new user namespaces. The bot reads what it is given as "others" do:
files it must read need the others' read bit (``chmod o+rX``); the folders above them
need nothing, bwrap reaches them.

The namespace is made by a short-lived child (``unshare(CLONE_NEWUSER)`` between fork
and exec, then ``read`` on a pipe), whose maps the referee writes as root; the
namespace's descriptor outlives the child.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import subprocess
from collections.abc import Callable
from typing import Final

__all__ = ["FIRST_ID", "HOST_ROOT_INSIDE", "ID_COUNT", "INODES_PER_MIB", "RUN", "SANDBOX_ID",
           "TMPFS_BASE", "make_tmpfs_base", "next_host_id", "tmpfs_mounter",
           "user_namespace"]

#: The first host uid (and gid) of sandboxed bots run by root; far above the ranges
#: that systems and container tools hand out (subordinate ids, systemd's dynamic users).
FIRST_ID: Final = 0x5A000000
#: How many ids the range holds (a bot process takes the next, round robin).
ID_COUNT: Final = 1 << 20
#: The bot's uid and gid inside the sandbox.
SANDBOX_ID: Final = 65534
#: What host root is inside the sandbox (its files' owner, as ``ls`` shows it).
HOST_ROOT_INSIDE: Final = 1

_CLONE_NEWUSER: Final = 0x10000000
_ids = itertools.count()


def next_host_id() -> int:
    """A host uid (and gid) for the next bot process: distinct from the last
    :data:`ID_COUNT` this process handed out and, most likely, from other referees'."""
    return FIRST_ID + (os.getpid() * 4099 + next(_ids)) % ID_COUNT


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def user_namespace(host_id: int) -> int:
    """A descriptor of a new user namespace (close-on-exec) whose uid and gid
    :data:`SANDBOX_ID` is ``host_id`` on the host, and :data:`HOST_ROOT_INSIDE` host
    root. Root only; OSError when the kernel refuses. Blocking (a fork and an exec)."""
    unshare = _libc().unshare

    def enter() -> None:  # in the child, between fork and exec
        if unshare(_CLONE_NEWUSER) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")

    child = subprocess.Popen(["/bin/sh", "-c", "read -r done"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             preexec_fn=enter, close_fds=True)
    try:
        lines = f"{SANDBOX_ID} {host_id} 1\n{HOST_ROOT_INSIDE} 0 1\n"
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{child.pid}/{name}", "w") as f:
                f.write(lines)
        return os.open(f"/proc/{child.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()


#: Where, in a bot's own mount namespace, its /tmp and /dev/shm are mounted before
#: bwrap binds them (an empty folder on the host: the mounts are never seen there).
TMPFS_BASE: Final = "/run/taki-referee/tmpfs"
#: Inodes (files, folders) per MiB of a bot's /tmp and /dev/shm: one per 4 KiB.
INODES_PER_MIB: Final = 256
_CLONE_NEWNS: Final = 0x00020000
_MS_NOSUID: Final = 0x2
_MS_NODEV: Final = 0x4
_MS_REC: Final = 0x4000
_MS_SLAVE: Final = 0x80000


def make_tmpfs_base() -> None:
    """The host folder the bots' tmpfs are mounted on (root only)."""
    os.makedirs(TMPFS_BASE, mode=0o755, exist_ok=True)


#: Where an unprivileged referee's bot process mounts the folder above
#: :data:`TMPFS_BASE` (in its own mount namespace: the host's is never touched).
RUN: Final = "/run"


def tmpfs_mounter(size_mb: int, *, own_user: bool = False) -> Callable[[], None]:
    """What to call between fork and exec for a mount namespace of the process's own
    where :data:`TMPFS_BASE` holds ``tmp`` and ``shm``, each a tmpfs of ``size_mb`` MiB
    and ``size_mb`` * :data:`INODES_PER_MIB` inodes (bwrap's ``--tmpfs`` bounds only
    the size: a bot could fill the host's kernel memory with empty files). As root;
    or, ``own_user``, as any user: the process first makes a user namespace of its own
    in which it is root (the referee's user outside), and mounts a tmpfs over
    :data:`RUN` for the folders (which bwrap then sees, and nothing under the host's
    /run). Everything it needs is looked up here, before the fork."""
    libc = _libc()
    unshare, mount, get_errno = libc.unshare, libc.mount, ctypes.get_errno
    mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                      ctypes.c_char_p]
    base = TMPFS_BASE.encode()
    options = f"size={size_mb}m,nr_inodes={size_mb * INODES_PER_MIB},mode=1777".encode()
    flags = _MS_NOSUID | _MS_NODEV

    maps = ((b"/proc/self/setgroups", b"deny"),
            (b"/proc/self/uid_map", b"0 %d 1" % os.getuid()),
            (b"/proc/self/gid_map", b"0 %d 1" % os.getgid()))

    def check(result: int, what: str) -> None:
        if result != 0:
            raise OSError(get_errno(), what)

    def mount_in_child() -> None:
        check(unshare(_CLONE_NEWNS | (_CLONE_NEWUSER if own_user else 0)), "unshare")
        for path, line in maps if own_user else ():
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        check(mount(None, b"/", None, _MS_REC | _MS_SLAVE, None), "mount --make-rslave /")
        if own_user:
            check(mount(b"tmpfs", RUN.encode(), b"tmpfs", flags,
                        b"size=64k,nr_inodes=16,mode=0755"), "mount tmpfs")
            os.makedirs(base, 0o755)
        check(mount(b"tmpfs", base, b"tmpfs", flags, b"size=64k,nr_inodes=8,mode=0755"),
              "mount tmpfs")
        for name in (b"/tmp", b"/shm"):
            os.mkdir(base + name, 0o755)
            check(mount(b"tmpfs", base + name, b"tmpfs", flags, options), "mount tmpfs")

    return mount_in_child
