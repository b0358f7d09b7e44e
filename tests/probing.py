"""A league of the sandbox probe (tests/hostile_bots/sandbox_probe.py, mode ``report``)
against a random bot, for a test per executor: every probe process says from inside
whether it runs sandboxed and whether it can read a file of the referee's."""

from __future__ import annotations

import re
import socket
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROBE = REPO / "tests" / "hostile_bots" / "sandbox_probe.py"
RANDOM = REPO / "sample_bots" / "random_bot.py"


def probe_league(tmp_path: Path, *, sandbox: bool, league: str = "") -> Path:
    """The league file: one deal, so two units (one per seat rotation), each with a
    probe process of its own."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the referee's own file")
    path = tmp_path / "probe.toml"
    path.write_text(f"""\
[league]
deals = 1
seed = 5
concurrency = 1
sandbox = {"true" if sandbox else "false"}
{league}

[[bots]]
name = "probe"
command = "python {PROBE} report ={secret}"

[[bots]]
name = "random"
command = "python {RANDOM} 1"
""")
    return path


def probe_reports(log_dir: Path) -> list[str]:
    """What the probe processes said, one string per process."""
    return [p.read_text() for p in sorted(log_dir.glob("*-probe.log"))]


def check_reports(reports: list[str], secret: Path, *, sandboxed: bool) -> None:
    """Each of the two probe processes ran sandboxed (its own host name and pid
    namespace, the referee's file out of sight), or each ran as the referee's user."""
    assert len(reports) == 2, reports
    for report in reports:
        assert "sandbox-probe report: host" in report, report
        if sandboxed:
            found = re.search(r"host sandbox, pid (\d+), sees (\d+) processes", report)
            assert found is not None, report
            # A pid namespace of its own: bwrap as its pid 1, the bot, nothing else.
            assert int(found[1]) < 10 and int(found[2]) < 10, report
            assert f"cannot read {secret}" in report, report
            # sysinfo() answered by the referee that started it (fixed figures).
            found = re.search(r"sysinfo: 1 processes, load 0, free (\d+) of (\d+)", report)
            assert found is not None and found[1] == found[2], report
        else:
            assert f"host {socket.gethostname()}," in report, report
            assert f"can read {secret}" in report, report
