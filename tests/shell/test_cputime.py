"""The CPU time of a bot's process tree, read from /proc (referee.shell.cputime)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from referee.shell.cputime import CpuMeter, host_sample, load_per_cpu, own_cgroup_dirs

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")

#: A parent that starts a child spinning for SECONDS, then sleeps: the CPU is the child's.
SPINNING_CHILD = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c",
    "import time\\nt = time.process_time()\\nwhile time.process_time() - t < {seconds}: pass"])
{after}
time.sleep(60)
"""


def spawn(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.fixture
def tree() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        stop(proc)


def wait_for(meter: CpuMeter, at_least_ms: float, timeout_s: float = 30) -> float:
    before = meter.quick()
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        used = meter.quick().since(before)
        if used >= at_least_ms:
            return used
        time.sleep(0.02)
    raise AssertionError(f"the tree used only {used:.0f} ms of CPU in {timeout_s} s")


def test_the_cpu_of_a_live_child_is_the_bots(tree: list[subprocess.Popen[bytes]]) -> None:
    tree.append(spawn(SPINNING_CHILD.format(seconds=30, after="")))
    meter = CpuMeter(tree[0].pid)
    # The parent sleeps; only its child spins, and the tree's CPU time still grows.
    assert wait_for(meter, 200) >= 200


def test_the_cpu_of_a_reaped_child_stays_the_bots(tree: list[subprocess.Popen[bytes]]) -> None:
    tree.append(spawn("import time\ntime.sleep(0.5)\n" + SPINNING_CHILD.format(
        seconds=0.3, after="child.wait()")))
    meter = CpuMeter(tree[0].pid)
    before = meter.quick()
    time.sleep(0.2)
    deadline = time.monotonic() + 30
    while meter.quick().since(before) < 250 and time.monotonic() < deadline:
        time.sleep(0.05)
    # The child is gone (reaped by the parent), its 300 ms counted in cutime.
    assert meter.quick().since(before) >= 250


def test_an_orphan_of_the_session_is_found_by_a_thorough_sample(
    tree: list[subprocess.Popen[bytes]],
) -> None:
    """A grandchild whose parent exited is reparented out of the tree, but stays in the
    bot's session: a thorough sample counts it (all its CPU, since it is new to it)."""
    tree.append(spawn(
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"  # orphaned below
        "time.sleep(0.3)\n"))
    meter = CpuMeter(tree[0].pid)
    start = meter.sample()
    tree[0].wait()  # the parent exited: its spinning child is an orphan in its session
    time.sleep(0.5)
    assert meter.sample().since(start) >= 100


def test_run_delay_and_the_host_are_sampled(tree: list[subprocess.Popen[bytes]]) -> None:
    tree.append(spawn("while True: pass"))
    meter = CpuMeter(tree[0].pid)
    first = meter.tree_sample()
    time.sleep(0.2)
    later = meter.tree_sample()
    assert later.run_delay_since(first) is not None
    assert meter.quick().run_delay_since(first) is None  # quick samples do not read it
    host = host_sample()
    assert host.at > 0
    assert load_per_cpu() is not None
    assert host.referee_delay_since(host) == 0.0


def test_a_process_that_is_gone_counts_nothing() -> None:
    proc = spawn("pass")
    proc.wait()
    meter = CpuMeter(proc.pid)
    assert meter.quick().by_pid == {}


def test_only_the_bots_own_cgroup_counts() -> None:
    """The referee's own cgroup is shared: it is never read as a bot's."""
    assert own_cgroup_dirs(os.getpid()) == ()


def test_a_process_that_became_a_zombie_counts_nothing() -> None:
    """Read while it lived, then ended (not reaped): its exit moved its CPU clock, so its
    state is read again and it counts nothing (its parent counts it once it reaps it)."""
    proc = spawn("import time\ntime.sleep(0.3)")
    try:
        meter = CpuMeter(proc.pid)
        assert proc.pid in meter.quick().by_pid
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # a zombie, not reaped
        assert meter.quick().by_pid == {}
    finally:
        proc.wait()


#: A subreaper that sleeps throughout (its CPU clock stands still): its child exits,
#: and the child's spinning child is given to it without it running.
SLEEPING_SUBREAPER = """
import ctypes, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
subprocess.Popen([sys.executable, "-c", "import subprocess, sys\\n"
    "subprocess.Popen([sys.executable, '-c', 'while True: pass'])"])
time.sleep(60)
"""


def test_an_orphan_given_to_a_sleeping_process_is_found(
    tree: list[subprocess.Popen[bytes]],
) -> None:
    tree.append(spawn(SLEEPING_SUBREAPER))
    meter = CpuMeter(tree[0].pid)
    assert wait_for(meter, 200) >= 200


#: A wrapper that spends CPU of its own first (a sandbox's start-up), then starts one
#: child that spins and waits for it, as ``bwrap`` does.
WRAPPER = """
import subprocess, sys, time
t = time.process_time()
while time.process_time() - t < 0.3: pass
subprocess.Popen([sys.executable, "-c", "while True: pass"]).wait()
"""


def test_a_wrapper_is_left_out_of_every_reading(tree: list[subprocess.Popen[bytes]]) -> None:
    """A wrapped bot is counted from the wrapper's child on, by the quick readings and
    the thorough samples alike: the wrapper's own CPU is never charged, not even as a
    process that one reading has and the other has not."""
    tree.append(spawn(WRAPPER))
    wrapper = tree[0].pid
    meter = CpuMeter(wrapper, wrapped=True)
    until = time.monotonic() + 30
    while meter.root == wrapper and time.monotonic() < until:
        time.sleep(0.02)
    assert meter.root != wrapper
    quick, thorough, tree_sample = meter.quick(), meter.sample(), meter.tree_sample()
    for sample in (quick, thorough, tree_sample):
        assert wrapper not in sample.by_pid and meter.root in sample.by_pid
    # A thorough sample against a quick reading: the child's CPU since, not the
    # wrapper's 300 ms of start-up.
    assert thorough.since(quick) < 250
    assert wait_for(meter, 200) >= 200
