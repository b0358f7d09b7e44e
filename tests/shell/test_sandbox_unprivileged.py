"""The sandbox's key attacks, tried when an unprivileged user runs the referee: run as
root, the test copies the referee, its dependencies and the hostile bots into a folder
others can read, and runs tests/shell/sandbox_as_nobody.py as ``nobody`` with the
system's Python (the suite's own interpreter may live where others cannot read, under
/root). Run as another user, it runs the script as that user. It skips, saying why,
only where the kernel forbids unprivileged user namespaces or no Python of the suite's
version can be run by that user."""

from __future__ import annotations

import errno
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.shell.sandbox_user import INODES_PER_MIB
from referee.shell.sysinfo_notify import PROCS

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "hostile_bots"
DRIVER = Path(__file__).with_name("sandbox_as_nobody.py")
#: The packages the referee's shell imports (beside the standard library).
PACKAGES = ("referee", "taki_protocol", "trio", "msgpack", "attrs", "attr", "outcome",
            "sniffio", "sortedcontainers", "idna")
NOBODY = 65534
#: A third process whose processes and memory come and go (tests/hostile_bots/disturber.py).
DISTURBER = (str(Path(__file__).resolve().parents[1] / "hostile_bots" / "disturber.py"),
             "20", "32")

pytestmark = pytest.mark.slow


def as_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]


def runs(argv: list[str], cwd: str = "/") -> bool:
    done = subprocess.run(as_user(argv), cwd=cwd, capture_output=True, timeout=60,
                          check=False)
    return done.returncode == 0


def python_for_the_user() -> str:
    """A Python of the suite's version that the user can run and find (the referee
    checks that a bot's program exists)."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    check = "import os, sys; assert os.path.exists(sys.executable)"
    for candidate in (f"/usr/bin/python{version}", os.path.realpath(sys.executable)):
        if os.path.exists(candidate) and runs([candidate, "-c", check]):
            return candidate
    pytest.skip(f"no Python {version} that uid {NOBODY} can run (the suite's lives where"
                f" it cannot read)")


@pytest.fixture(scope="module")
def copied() -> Iterator[Path]:
    """A folder others can read: lib/ (the packages), hostile/ (the bots), the driver."""
    if not runs(["unshare", "--user", "true"]):
        pytest.skip("the kernel forbids unprivileged user namespaces"
                    " (user.max_user_namespaces, or an AppArmor or sysctl restriction)")
    where = Path(tempfile.mkdtemp(prefix="taki-unprivileged-"))
    try:
        for name in PACKAGES:
            source = Path(importlib.import_module(name).__file__ or "").parent
            shutil.copytree(source, where / "lib" / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(HOSTILE, where / "hostile",
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(DRIVER, where / DRIVER.name)
        for folder, _dirs, files in os.walk(where):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


@pytest.fixture(scope="module")
def seen(copied: Path) -> dict[str, Any]:
    python = python_for_the_user()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(copied), "LANG": "C.UTF-8",
           "PYTHONPATH": str(copied / "lib"), "PYTHONDONTWRITEBYTECODE": "1"}
    disturber = subprocess.Popen([sys.executable, *DISTURBER])
    try:
        done = subprocess.run(as_user([python, DRIVER.name, str(copied / "hostile")]),
                              cwd=copied, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
    finally:
        disturber.kill()
        disturber.wait()
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_sandboxs_user_is_the_unprivileged_user(seen: dict[str, Any]) -> None:
    # Never host root: the host sees the bot (and its bwrap) as the referee's user.
    uid = NOBODY if os.geteuid() == 0 else os.geteuid()
    assert seen["host_uids"] == [uid], seen["host_uids"]


def test_host_kernel_settings_are_out_of_reach(seen: dict[str, Any]) -> None:
    assert seen["sysctl"] in ("EACCES", "EROFS", "EPERM"), seen["sysctl"]


@pytest.mark.parametrize("channel", ["flock", "fcntl"])
def test_locks_on_a_shared_file_carry_nothing(seen: dict[str, Any], channel: str) -> None:
    sent, got = seen[channel]
    assert got == "0" * len(sent), (sent, got)


@pytest.mark.parametrize("key", ["inodes", "inodes_shm"], ids=["tmp", "dev-shm"])
def test_tmp_has_inodes_in_proportion_to_its_size(seen: dict[str, Any], key: str) -> None:
    made, why = seen[key]
    assert made < INODES_PER_MIB and why == "No space left on device", seen[key]


def test_the_hosts_run_stays_out_of_sight_and_untouched(seen: dict[str, Any]) -> None:
    # The tmpfs the bot's process mounts over /run (to hold its /tmp and /dev/shm) is
    # in a mount namespace of its own: the sandbox sees no /run, the host no new mount.
    assert seen["run"] == "No such file or directory", seen["run"]
    before, after = seen["mounts"]
    assert after == before, seen["mounts"]


def test_a_bot_that_must_see_run_gets_bwraps_tmp_bounded_in_size_only(
        seen: dict[str, Any]) -> None:
    made, _why = seen["inodes_run"]
    assert made > INODES_PER_MIB, seen["inodes_run"]  # 1 MiB of empty files


def test_sysinfo_tells_fixed_figures(seen: dict[str, Any]) -> None:
    probe = seen["sysinfo"]
    total = 256 << 20
    assert not probe["errors"] and len(probe["samples"]) >= 5, probe
    assert all(s == [total, total, 0, 0, 0, 0, PROCS, 0, 0, 0, 1]
               for s in probe["samples"]), probe
    assert probe["phys_pages"] * probe["page_size"] == total, probe


def test_sysinfo_is_written_only_where_the_callers_own_call_would(seen: dict[str, Any]
                                                                   ) -> None:
    # As tests/shell/test_sandbox_sysinfo_attacks.py checks it as root.
    pointers = seen["pointers"]
    assert pointers["shared_file"] == errno.EFAULT and pointers["file_same"], pointers
    assert pointers["straddle"] == errno.EFAULT, pointers
    assert pointers["top"] in (errno.EFAULT, -1), pointers
    high = pointers["high_bits"]
    assert high["result"] is None or (high["low"] and not high["high"]), pointers
    # A bot that makes itself undumpable may shut the referee's user out of its memory:
    # its own calls then fail (ENOSYS), nothing else does.
    assert pointers["undumpable"] in (0, errno.ENOSYS), pointers
