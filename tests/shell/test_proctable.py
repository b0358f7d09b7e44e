"""A bot's processes as /proc shows them: children, liveness, the rest of a session."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from referee.shell.proctable import alive, children_of, session_stragglers

# Starts a child in a session of its own and a child that stays in its session, prints
# their pids, and sleeps.
PARENT = """
import os, sys, time
pids = []
for leave in (True, False):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if leave:
            os.setsid()
        os.write(w, b"x")
        time.sleep(60)
        os._exit(0)
    os.read(r, 1)
    pids.append(pid)
print(*pids, flush=True)
time.sleep(60)
"""


def test_children_liveness_and_session() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE,
                              start_new_session=True)
    try:
        assert parent.stdout is not None
        own_session, same_session = (int(p) for p in parent.stdout.readline().split())
        assert sorted(children_of(parent.pid)) == sorted([own_session, same_session])
        assert alive(parent.pid) and alive(own_session)
        # The session's leader is alive: the session is the bot's, no straggler yet.
        assert session_stragglers(parent.pid) == []
        os.kill(own_session, 9)
        os.kill(parent.pid, 9)
        parent.wait()
        deadline = time.monotonic() + 5
        while alive(own_session) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not alive(own_session) and not alive(parent.pid)
        # The leader is gone: what is left of its session is a straggler.
        assert session_stragglers(parent.pid) == [same_session]
        assert children_of(parent.pid) == []
    finally:
        os.killpg(parent.pid, 9)
        parent.wait()
