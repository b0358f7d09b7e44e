"""A starter kit uploaded to ``taki-referee serve`` while its ladder plays: does its
build and check pass with the competition's default limits and time control?

One server runs on 127.0.0.1 with four participants' random bots playing in its
ladder (as in ``benchmarks/abuse.py``). Once the ladder plays, a fifth participant
uploads the kit (``--kit``, default ``java``: its JVM's start is the slowest handshake
of the kits) ``--uploads`` times with the real ``taki-referee submit``, each a copy made
by ``taki-referee kit`` (the server builds and checks it 10 nice levels below itself,
beside the ladder's games). For each upload: passed or rejected (with the check's
output: a failure on time names the time it allowed), how long ``submit`` took, and
the ladder's games per minute meanwhile. The load average is printed at each upload.

Last line: ``KIT kit in serve beside the ladder: passed P of U uploads; forfeits N``.
Run from the repository root: ``.venv/bin/python benchmarks/kit_in_serve.py``
(bubblewrap and the kit's toolchain must be installed).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from abuse import TAKI, games_and_forfeits, playing_ladder

COMPETITION = """\
[competition]
name = "kit in serve"

[ladder]
deals = 1
concurrency = 2
placement_games = 4
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kit", default="java")
    parser.add_argument("--uploads", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.2f}", flush=True)
    passed = forfeits = 0
    with tempfile.TemporaryDirectory(prefix="taki-kit-serve-") as folder:
        where = Path(folder)
        with playing_ladder(where, COMPETITION, ["kit"]) as (url, tokens, db):
            after, _, _ = games_and_forfeits(db, 0)
            for upload in range(args.uploads):
                kit = where / f"{args.kit}-{upload}"
                subprocess.run([TAKI, "kit", args.kit, str(kit)], check=True,
                               capture_output=True)
                began = time.monotonic()
                done = subprocess.run([TAKI, "submit", url, str(kit), "--token",
                                       tokens["kit"]], capture_output=True, text=True)
                took = time.monotonic() - began
                after, games, lost = games_and_forfeits(db, after)
                forfeits += lost
                ok = done.returncode == 0
                passed += ok
                print(f"upload {upload + 1}: {'passed' if ok else 'REJECTED'} in {took:.0f} s;"
                      f" the ladder meanwhile {games * 60 / took:.1f} games/min, {lost}"
                      f" forfeits (load {os.getloadavg()[0]:.2f})", flush=True)
                if not ok:
                    print(done.stdout[-3000:] + done.stderr[-1000:], flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"{args.kit} kit in serve beside the ladder: passed {passed} of {args.uploads}"
          f" uploads; forfeits {forfeits}")


if __name__ == "__main__":
    main()
