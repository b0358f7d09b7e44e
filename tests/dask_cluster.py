"""A Dask LocalCluster in a process of its own, for the tests that play on one: the test
process keeps no child when the cluster ends (not even multiprocessing's resource
tracker). The cluster runs until its process's input closes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

SCRIPT = """\
import sys
from distributed import LocalCluster

with LocalCluster(dashboard_address=":0", {options}) as cluster:
    print(cluster.scheduler_address, flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def local_cluster(log: Path, options: str) -> Iterator[tuple[str, int]]:
    """The scheduler's address (``tcp://HOST:PORT``) and the pid of the process that runs
    a LocalCluster made with ``options`` (Python keyword arguments, as text); its
    stderr goes to ``log``."""
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", SCRIPT.format(options=options)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        address = proc.stdout.readline().decode().strip()
        assert address.startswith("tcp://"), log.read_text()
        yield address, proc.pid
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
