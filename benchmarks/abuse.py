"""The ladder under abuse: its games per minute while one participant sends 40
decompression bombs at once, and while 40 threads flood the pages anonymously, against
the ladder alone, in one run of ``taki-referee serve`` on 127.0.0.1.

One server runs in a process of its own with four participants' random bots in its
ladder. Periods of ``--seconds`` take turns, ``--rounds`` times: *idle* (the ladder
alone), *bombs* (``--threads`` threads of one participant, a new one each round with
the default limits, each uploading again and again a gzip tar whose one file unpacks
to 1 GiB of zeros, as fast as the server answers) and *flood* (``--threads`` threads
loading ``/`` without a token, back to back). The abusing threads run in a process of
their own at nice 19: an attacker's CPU is another machine's, not the server's. For each
period: the games stored per minute, the forfeits among them, and what the abusers got
(answers by status). The load average is printed at every period.

Its last line is ``ladder under abuse: bombs B%; flood F%; forfeits N``: the median
games per minute of the bombs and the flood periods as a share of the idle periods'
median, and the forfeits in all periods (each round's shares, against its own idle
period, are printed before it: the machine's other load drifts). Run from the repository root:
``.venv/bin/python benchmarks/abuse.py`` (about 8 minutes; bubblewrap must be
installed, as for any competition).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
TAKI = str(Path(sys.executable).with_name("taki-referee"))
COMPETITION = """\
[competition]
name = "abuse"

[ladder]
deals = 1
concurrency = 2
placement_games = 4

[time]
move_ms = 1000
startup_ms = 15000

[submissions]
per_day = 20
"""
PLAYERS = ("p1", "p2", "p3", "p4")
BOMB_BYTES = 1 << 30


class Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def tar_gz(files: dict[str, bytes], zeros: int = 0) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if zeros:
            info = tarfile.TarInfo("zeros")
            info.size = zeros
            tar.addfile(info, io.BufferedReader(Zeros(zeros)))
    return buffer.getvalue()


def bot_archive(name: str, seed: int) -> bytes:
    return tar_gz({"bot.toml": f'name = "{name}"\ncommand = "python random_bot.py {seed}"\n'
                   .encode(), "random_bot.py": RANDOM_BOT.read_bytes()})


def call(url: str, token: str | None = None, body: bytes | None = None) -> tuple[int, Any]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    request = urllib.request.Request(url, data=body, headers=headers,
                                     method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            data = answer.read()
            status = answer.status
    except urllib.error.HTTPError as exc:
        data, status = exc.read(), exc.code
    except OSError:
        return 0, None
    try:
        return status, json.loads(data)
    except ValueError:
        return status, None


def start_server(where: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([TAKI, "serve", "competition.toml", "--db",
                                "competition.sqlite", "--listen", "127.0.0.1:0"], cwd=where,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        found = re.search(r"serving on (http://\S+)", line)
        if found:
            threading.Thread(target=lambda: [None for _ in process.stdout],  # type: ignore
                             daemon=True).start()
            return process, found.group(1)
    raise SystemExit("serve did not start")


@contextlib.contextmanager
def playing_ladder(where: Path, competition: str, others: Sequence[str],
                   ) -> Iterator[tuple[str, dict[str, str], Path]]:
    """``serve`` in ``where`` with ``competition`` as its file: the participants of
    :data:`PLAYERS` and ``others`` added, the players' random bots uploaded, checked and
    playing for 10 s. Yields the server's address, each participant's token and the
    database; the server is stopped at the end."""
    (where / "competition.toml").write_text(competition)
    tokens = {}
    for name in (*PLAYERS, *others):
        out = subprocess.run([TAKI, "participants", "add", name, "--db",
                              "competition.sqlite"], cwd=where, check=True,
                             capture_output=True, text=True).stdout
        tokens[name] = out.strip().splitlines()[-1]
    server, url = start_server(where)
    try:
        for i, name in enumerate(PLAYERS):
            status, answer = call(f"{url}/api/submissions", tokens[name],
                                  bot_archive(f"{name}bot", i))
            assert status == 202, answer
        deadline = time.monotonic() + 600
        while len(call(f"{url}/api/bots")[1]["active"]) < len(PLAYERS):
            assert time.monotonic() < deadline, "the bots did not pass their checks"
            time.sleep(1)
        time.sleep(10)  # the placement games begin
        yield url, tokens, where / "competition.sqlite"
    finally:
        server.terminate()
        server.wait(timeout=60)


def games_and_forfeits(db: Path, after: int) -> tuple[int, int, int]:
    """The games stored after row ``after``: the last row, the games, the forfeits."""
    from referee.league.store import ResultStore

    games = forfeits = 0
    with ResultStore(db, readonly=True) as store:
        while True:
            after_next, more = store.games_since(after, 1000)
            if not more:
                return after, games, forfeits
            after = after_next
            games += len(more)
            forfeits += sum(1 for g in more for s in g.seats if s.forfeit_reason is not None)


def abuse(kind: str, url: str, token: str, threads: int, bomb: bytes, until: float,
          answers: Counter[str]) -> None:
    """The abusing threads (in a process of their own: :func:`abuser`)."""
    def one() -> None:
        while time.monotonic() < until:
            if kind == "bombs":
                status, _ = call(f"{url}/api/submissions", token, bomb)
            else:
                status, _ = call(f"{url}/")
            answers[str(status)] += 1

    workers = [threading.Thread(target=one) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def abuser(kind: str, url: str, token: str, threads: int, bomb: Path, seconds: float,
           ) -> Counter[str]:
    """Run :func:`abuse` in a process of its own at the lowest CPU priority: an
    attacker's own CPU is not the server's (it would be another machine), so the
    abusing clients take only what the server and its bots leave. Its answers by
    status."""
    done = subprocess.run(
        [sys.executable, __file__, "--abuse", kind, url, token, str(threads), str(bomb),
         str(seconds)], capture_output=True, text=True, check=True,
        preexec_fn=lambda: os.nice(19))
    return Counter(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    if sys.argv[1:2] == ["--abuse"]:
        kind, url, token, threads, bomb, seconds = sys.argv[2:]
        answers: Counter[str] = Counter()
        abuse(kind, url, token, int(threads), Path(bomb).read_bytes(),
              time.monotonic() + float(seconds), answers)
        print(json.dumps(answers))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=40)
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.2f}", flush=True)
    bomb = tar_gz({"bot.toml": b'name = "bomb"\ncommand = "true"\n'}, BOMB_BYTES)
    print(f"a bomb: {len(bomb)} bytes that unpack to {BOMB_BYTES >> 20} MiB", flush=True)
    with tempfile.TemporaryDirectory(prefix="taki-abuse-") as folder:
        where = Path(folder)
        bomb_file = where / "bomb.tar.gz"
        bomb_file.write_bytes(bomb)
        mallories = [f"mallory{r}" for r in range(args.rounds)]
        with playing_ladder(where, COMPETITION, mallories) as (url, tokens, db):
            after, _, _ = games_and_forfeits(db, 0)
            rates: dict[str, list[float]] = {"idle": [], "bombs": [], "flood": []}
            forfeits = 0
            for round_ in range(args.rounds):
                for kind in ("idle", "bombs", "flood"):
                    answers: Counter[str] = Counter()
                    began = time.monotonic()
                    if kind == "idle":
                        time.sleep(args.seconds)
                    else:  # a participant of the competition's limits, new each round
                        answers = abuser(kind, url, tokens[mallories[round_]], args.threads,
                                         bomb_file, args.seconds)
                    took = time.monotonic() - began
                    after, games, lost = games_and_forfeits(db, after)
                    forfeits += lost
                    rate = games * 60 / took
                    rates[kind].append(rate)
                    got = ", ".join(f"{s}: {n}" for s, n in sorted(answers.items()))
                    print(f"round {round_ + 1} {kind:5}: {rate:5.1f} games/min, {lost}"
                          f" forfeits{'; abusers got ' + got if got else ''}"
                          f" (load {os.getloadavg()[0]:.2f})", flush=True)
                    status, _ = call(f"{url}/api/submissions", tokens["p1"])
                    assert status == 200, "the API stopped answering"
    idle = statistics.median(rates["idle"])
    bombs = 100 * statistics.median(rates["bombs"]) / idle
    flood = 100 * statistics.median(rates["flood"]) / idle
    print(f"median games/min: idle {idle:.1f}, bombs {statistics.median(rates['bombs']):.1f},"
          f" flood {statistics.median(rates['flood']):.1f}")
    for kind in ("bombs", "flood"):  # each against the idle period just before it
        shares = ", ".join(f"{100 * r / i:.0f}%"
                           for r, i in zip(rates[kind], rates["idle"], strict=True))
        print(f"{kind} against the idle period of its round: {shares}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"ladder under abuse: bombs {bombs:.0f}%; flood {flood:.0f}%; forfeits {forfeits}")


if __name__ == "__main__":
    main()
