"""A bot that tries to be charged less CPU time than it uses: before it plays (like a
random bot), it tries to leave the cgroups the referee put it in (writing its pid to
every ``cgroup.procs`` above its own), to reset its CPU counter (``cpuacct.usage``) and
to raise its limits. It tells on stderr what got through: ``cgroup_escape: refused``
when nothing did, else ``cgroup_escape: through <paths>``.

Usage: cgroup_escape.py
"""

import os
import sys

from _common import play

ROOT = "/sys/fs/cgroup"


def targets() -> list[tuple[str, str]]:
    """(file, what to write) for every hierarchy: its root's and the bots' parent's
    ``cgroup.procs``, and the bot's own counter and limits."""
    out = []
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    pid = str(os.getpid())
    for line in lines:
        _, controllers, path = [*line.split(":", 2), "", ""][:3]
        base = os.path.join(ROOT, controllers) if controllers else ROOT
        own = os.path.join(base, path.lstrip("/"))
        out += [(os.path.join(base, "cgroup.procs"), pid),
                (os.path.join(os.path.dirname(own), "cgroup.procs"), pid),
                (os.path.join(own, "cpuacct.usage"), "0"),
                (os.path.join(own, "memory.limit_in_bytes"), "-1"),
                (os.path.join(own, "pids.max"), "max")]
    return out


through = []
for name, value in targets():
    try:
        with open(name, "w") as f:
            f.write(value)
    except OSError:
        continue
    through.append(name)
print("cgroup_escape:", "through " + " ".join(through) if through else "refused",
      file=sys.stderr, flush=True)
play("cgroup_escape")
