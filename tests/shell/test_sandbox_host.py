"""The sandbox holds when the referee is root: the sandbox's user is a host user of its
own, the kernel's settings and root's keys are out of reach, the filter denies what it
says, and a command names nothing outside its bot. Hostile bots:
tests/hostile_bots/host_probe.py (an ``illegal`` forfeit when it gets through).
Each is also run where it gets through (bare, or contained), to prove the probe."""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio
from jsonout import strict_json
from processes import processes_naming

from referee.cli.main import main
from referee.core import BotCommand, BotStartError, ResourceLimits, Sandbox
from referee.shell.spawn import open_bot_process

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "tests" / "hostile_bots" / "host_probe.py"
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'} 1"
ROOT = os.geteuid() == 0


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def match(capsys: pytest.CaptureFixture[str], mode: str, *options: str) -> tuple[Any, str]:
    """The probe's forfeit (None when it played on) and its log."""
    bots = [f"probe=python {PROBE} {mode}", RANDOM]
    code = main(["match", *bots, "--games", "1", "--seed", "1", "--json", "--move-ms",
                 "5000", "--log-dir", "logs", *options])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    (players,) = [g["players"] for g in strict_json(captured.out)["games"]]
    log = "".join(p.read_text() for p in sorted(Path("logs").glob("*probe*.log")))
    return next(p["forfeit"] for p in players if p["bot"] == "probe"), log


def test_host_kernel_settings_are_out_of_reach(here: Path, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    forfeit, log = match(capsys, "sysctl", "--sandbox")
    assert forfeit is None, log
    for path in ("/proc/sys/vm/swappiness", "/proc/sys/kernel/core_pattern"):
        assert f"cannot write {path}: Permission denied" in log, log
    assert "cannot write /proc/sysrq-trigger" in log, log
    if ROOT:  # a host user of its own, host root mapped to 1
        assert "uid_map ['65534', '1509" in log or "uid_map ['65534', '151" in log, log
        assert "['1', '0', '1']" in log, log


@pytest.mark.skipif(not ROOT, reason="the host writes only for root")
@pytest.mark.usefixtures("uncontained")
def test_the_sysctl_probe_gets_through_as_root_without_the_sandbox(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forfeit, log = match(capsys, "sysctl")  # writes each its current value: no change
    assert forfeit is not None and forfeit["reason"] == "illegal", log


def _host_uids(marker: str) -> set[int]:
    uids = set()
    for process in processes_naming(marker):
        with open(f"/proc/{process}/status") as f:
            uids |= {int(line.split()[1]) for line in f if line.startswith("Uid:")}
    return uids


async def _two_bots(marker: str) -> list[set[int]]:
    script = "import time; time.sleep(60)"
    seen = []
    for n in range(2):
        command = BotCommand((sys.executable, "-c", script, f"{marker}-{n}"),
                             sandbox=Sandbox())
        async with open_bot_process(command):
            deadline = time.monotonic() + 20
            # bwrap's outer process (root) shows first; then the sandbox's.
            while not (uids := _host_uids(f"{marker}-{n}")) - {0} \
                    and time.monotonic() < deadline:
                await trio.sleep(0.05)
            seen.append(uids)
    return seen


@pytest.mark.skipif(not ROOT, reason="run by another user, the sandbox's user is that user")
def test_a_sandboxed_bot_is_a_host_user_of_its_own() -> None:
    from referee.shell.sandbox_user import FIRST_ID, ID_COUNT

    first, second = trio.run(_two_bots, f"uid-{uuid.uuid4().hex}")
    # bwrap's own process outside stays root (it holds the namespaces); the bot and the
    # sandbox's pid 1 run as a host user from the range, each bot another.
    bot_uids = [uids - {0} for uids in (first, second)]
    assert all(len(u) == 1 for u in bot_uids), (first, second)
    (a,), (b,) = bot_uids
    assert FIRST_ID <= a < FIRST_ID + ID_COUNT and FIRST_ID <= b < FIRST_ID + ID_COUNT
    assert a != b


@pytest.mark.parametrize("how", ["sandboxed", "contained"])
def test_personality_cannot_turn_off_address_randomisation(
        here: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    forfeit, log = match(capsys, "personality", *(["--sandbox"] if how == "sandboxed" else []))
    assert forfeit is None, log
    assert log.count("refused: Operation not permitted") == 4, log


@pytest.mark.usefixtures("uncontained")
def test_the_personality_probe_gets_through_without_the_filter(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forfeit, log = match(capsys, "personality")
    assert forfeit is not None and forfeit["reason"] == "illegal", log


@pytest.mark.parametrize("how", ["sandboxed", "contained"])
def test_proc_keys_shows_nothing(here: Path, capsys: pytest.CaptureFixture[str], how: str
                                 ) -> None:
    forfeit, log = match(capsys, "keys", *(["--sandbox"] if how == "sandboxed" else []))
    assert forfeit is None, log


@pytest.mark.parametrize("how", ["sandboxed", "contained"])
def test_a_minimal_dev_without_userfaultfd_or_consoles(
        here: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    forfeit, log = match(capsys, "devices", *(["--sandbox"] if how == "sandboxed" else []))
    assert forfeit is None, log
    assert "no userfaultfd: No such file or directory" in log, log


@pytest.mark.skipif(not os.path.exists("/dev/userfaultfd"), reason="no /dev/userfaultfd here")
@pytest.mark.usefixtures("uncontained")
def test_the_devices_probe_gets_through_bare(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forfeit, log = match(capsys, "devices")
    assert forfeit is not None and forfeit["reason"] == "illegal", log


def _submission(tmp_path: Path) -> tuple[Path, Path]:
    """A competition's layout: a secret beside the bots' folders, and a bot's folder."""
    root = tmp_path / "comp"
    bot = root / "uploads" / "7" / "source"
    bot.mkdir(parents=True)
    (root / "organizer.token").write_text("0123456789abcdef\n")
    (root / "competition.sqlite").write_text("the database")
    for path in (root, root / "uploads", root / "uploads" / "7"):
        path.chmod(0o711)
    (bot / "bot.py").write_text(PROBE.read_text())
    (bot / "_common.py").write_text((PROBE.parent / "_common.py").read_text())
    return root, bot


@pytest.mark.parametrize("word", ["../../../organizer.token", "../../../competition.sqlite",
                                  "/etc/shadow", "/etc/no-such-file", "sub/../../x"])
def test_a_word_outside_the_bots_folder_is_refused_in_one_line(tmp_path: Path, word: str
                                                               ) -> None:
    _, bot = _submission(tmp_path)
    command = BotCommand(("python3", "bot.py", "file", word), cwd=str(bot),
                         sandbox=Sandbox())

    async def start() -> None:
        async with open_bot_process(command):
            pass

    with pytest.raises(BotStartError) as caught:
        trio.run(start)
    message = str(caught.value)
    assert "names a path outside the bot's folder" in message and "\n" not in message
    assert "0123456789abcdef" not in message


def test_a_file_where_the_log_folder_was_is_a_one_line_error(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A contained bot shares the host's files: it replaces ./logs with a file while it
    # plays; the next bot's start cannot write its log.
    bots = [f"probe=python {PROBE} logdir", RANDOM]
    code = main(["match", *bots, "--games", "2", "--seed", "1", "--log-dir", "logs"])
    err = capsys.readouterr().err
    assert code != 0
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert "cannot write the bot's log logs/" in last and last.endswith(": Not a directory")


@pytest.mark.skipif(not ROOT, reason="said only when root runs the bots")
def test_root_is_told_that_limits_bind_only_in_the_sandbox(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["match", f"python {PROBE} keys", RANDOM, "--games", "1", "--seed", "1",
                 "--pids", "64", "--log-dir", "logs"])
    err = capsys.readouterr().err
    assert code == 0
    assert err.count("bots run as root without --sandbox can escape their limits") == 1
    code = main(["match", f"python {PROBE} keys", RANDOM, "--games", "1", "--seed", "1",
                 "--pids", "64", "--sandbox", "--log-dir", "logs"])
    assert "can escape their limits" not in capsys.readouterr().err


def test_tmp_has_inodes_in_proportion_to_its_size(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from referee.shell.sandbox_user import INODES_PER_MIB

    forfeit, log = match(capsys, "inodes 300000", "--sandbox")  # tmp_mb: 64
    assert forfeit is None, log
    made = int(log.split("made ")[1].split(" files")[0])
    assert made < 64 * INODES_PER_MIB
    assert "No space left on device" in log


@pytest.mark.parametrize("how", ["sandboxed", "contained"])
def test_procs_host_counters_do_not_move(here: Path, capsys: pytest.CaptureFixture[str],
                                         how: str) -> None:
    forfeit, log = match(capsys, "frozen", *(["--sandbox"] if how == "sandboxed" else []))
    assert forfeit is None, log


@pytest.mark.usefixtures("uncontained")
def test_the_counters_probe_sees_them_move_bare(here: Path, capsys: pytest.CaptureFixture[str]
                                                ) -> None:
    forfeit, log = match(capsys, "frozen")
    assert forfeit is not None and forfeit["reason"] == "illegal", log


def test_the_page_cache_cannot_be_asked(here: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    forfeit, log = match(capsys, "pagecache", "--sandbox")
    assert forfeit is None, log
    assert "preadv2 with RWF_NOWAIT: Operation not supported" in log
    assert "io_uring_setup: Function not implemented" in log


@pytest.mark.skipif(not ROOT, reason="a bot run by another user has no capabilities anyway")
@pytest.mark.parametrize("how", ["sandboxed", "contained"])
def test_no_capabilities(here: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    forfeit, log = match(capsys, "caps", *(["--sandbox"] if how == "sandboxed" else []))
    assert forfeit is None, log


def _segments(key: int) -> bool:
    with open("/proc/sysvipc/shm") as f:
        return any(int(line.split()[0]) == key for line in list(f)[1:])


def test_a_contained_bots_sysv_objects_are_its_own(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = 0x7A4B0000 + os.getpid() % 0xFFFF
    _, log = match(capsys, f"ipc {key:x}")
    assert "made a segment" in log, log
    assert not _segments(key)  # gone with the bot's namespace, never on the host


def test_a_runtime_path_no_other_can_read_is_refused_in_one_line(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir(mode=0o700)
    (bot / "bot.py").write_text("print('hello')\n")
    command = BotCommand(("python3", "bot.py"), cwd=str(bot), sandbox=Sandbox())

    async def start() -> None:
        async with open_bot_process(command):
            pass

    if not ROOT:
        pytest.skip("run by another user, the sandbox's user is that user: it reads 0700")
    with pytest.raises(BotStartError) as caught:
        trio.run(start)
    assert f"cannot read {bot} (mode 0700): make it readable by others" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_runtimes_start_in_the_sandbox(tmp_path: Path) -> None:
    checks = {"java": "java -version", "node": "node --version", "go": "go version",
              "mono": "mono --version", "gcc": "gcc --version", "python3": "python3 -V"}
    import shutil

    script = " && ".join(c for name, c in checks.items() if shutil.which(name))
    command = BotCommand(("/bin/sh", "-c", f"({script}) >/dev/null 2>&1 && echo ran"),
                         sandbox=Sandbox(), limits=ResourceLimits(memory_mb=1024))

    async def output() -> str:
        async with open_bot_process(command) as process:
            out = b""
            while chunk := await process.receive_some(1024, deadline=trio.current_time() + 60):
                out += chunk
            return out.decode()

    assert trio.run(output).strip() == "ran"
