"""A starter kit's start as ``taki-referee serve`` checks it: in the sandbox, 10 nice levels
below the referee, beside busy loops (other users' jobs, each in a session of its own,
at the normal priority): does its handshake pass within the default startup time?

The kit (``--kit``, default ``java``: a JVM's start runs many threads) is copied out as
a participant gets it (``taki-referee kit``) and built once. Then, ``--runs`` times,
alternating, this tree's referee and the ``--anchor`` commit's (checked out beside it,
``benchmarks/anchor.py``) each start it once and wait for its ``bot_hello``, beside
``--busy`` busy loops per CPU. Each start prints whether it passed, its wall time and
the timeout's detail (which names the allowance it applied). The load average is printed
at each run.

Last line: ``KIT start at nice 10 beside B busy loops per CPU: this tree passed P of R,
anchor C passed Q of R (load L)``.
Run from the repository root: ``.venv/bin/python benchmarks/starved_start.py``
(bubblewrap and the kit's toolchain must be installed).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from anchor import REPO, checked_out

TAKI = str(Path(sys.executable).with_name("taki-referee"))

#: One start, run by the referee of the tree ``argv[2]`` (not the one installed in the
#: environment: its import hook is left out): prints its outcome as JSON.
START = """
import json, sys, time
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
sys.path[:0] = [sys.argv[2], sys.argv[2] + "/protocol"]
import attrs, trio
from referee.config import make_command
from referee.core import BotSpec, ResourceLimits, Sandbox, TimeControl
from referee.shell import open_bot

async def main():
    limits = ResourceLimits(memory_mb=1024, pids=128, niceness=10)
    command = attrs.evolve(make_command("./bot", cwd=sys.argv[1], limits=limits),
                           sandbox=Sandbox(tmp_mb=64))
    began = time.monotonic()
    async with open_bot(BotSpec("kit", command), startup_ms=TimeControl().startup_ms) as conn:
        took = time.monotonic() - began
        fault = conn.fault
    print(json.dumps({"passed": fault is None, "seconds": round(took, 1),
                      "detail": "" if fault is None else fault.detail}))

trio.run(main)
"""


def start(tree: Path, kit: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", START, str(kit), str(tree)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the start failed to run:\n{done.stderr[-2000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kit", default="java")
    parser.add_argument("--busy", type=int, default=8, help="busy loops per CPU")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--anchor", default="main")
    args = parser.parse_args()
    passed = {"this tree": 0, "anchor": 0}
    with tempfile.TemporaryDirectory(prefix="taki-starved-start-") as folder:
        kit = Path(folder) / args.kit
        subprocess.run([TAKI, "kit", args.kit, str(kit)], check=True, capture_output=True)
        subprocess.run([str(kit / "bot"), "--build"], check=True, capture_output=True)
        with checked_out(args.anchor, Path(folder) / "anchor") as anchor:
            loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                      start_new_session=True)
                     for _ in range(args.busy * (os.cpu_count() or 1))]
            try:
                for run in range(args.runs):
                    print(f"run {run + 1} (load {os.getloadavg()[0]:.1f})", flush=True)
                    for side, tree in (("anchor", anchor), ("this tree", REPO)):
                        result = start(tree, kit)
                        passed[side] += bool(result["passed"])
                        print(f"  {side:9}: {'passed' if result['passed'] else 'FAILED'} in"
                              f" {result['seconds']} s {result['detail']}", flush=True)
            finally:
                for loop in loops:
                    os.killpg(loop.pid, signal.SIGKILL)
                for loop in loops:
                    loop.wait()
    print(f"{args.kit} start at nice 10 beside {args.busy} busy loops per CPU: this tree passed"
          f" {passed['this tree']} of {args.runs}, anchor {args.anchor} passed"
          f" {passed['anchor']} of {args.runs} (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
