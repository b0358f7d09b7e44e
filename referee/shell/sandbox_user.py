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
from typing import Final

__all__ = ["FIRST_ID", "HOST_ROOT_INSIDE", "ID_COUNT", "SANDBOX_ID", "next_host_id",
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
