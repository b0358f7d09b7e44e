"""Builds in the sandbox: a build that loops, forks or fills its disk is stopped and the
submission rejected with a reason, and the next upload passes as if nothing happened.
Every build here runs in the sandbox and every upload is checked for real (slow)."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import psutil
import pytest
from served import REPO, Factory, Served, bot_folder, targz

from referee.competition.config import SandboxSection

pytestmark = pytest.mark.slow

HOSTILE_BUILDS = {
    "loops": ("while :; do :; done", "stopped after 3 s"),
    "forks": ("bomb() { bomb | bomb & }; bomb; sleep 100", "stopped after 3 s"),
    "fills the disk": ("dd if=/dev/zero of=big bs=1M count=10000", "build: failed"),
    "writes outside its folder": ("echo x > /usr/taki-evil", "build: failed"),
    "opens a socket": ("python3 -c \"import socket; socket.create_connection(('127.0.0.1', 22))\"",
                       "build: failed"),
}


@pytest.fixture
async def served(make_server: Factory) -> Served:
    checked: Served = await make_server(real_check=True)
    return checked


@pytest.fixture
async def strict(make_server: Factory) -> Served:
    served: Served = await make_server(real_check=True, sandbox=SandboxSection(
        build_seconds=3, build_disk_mb=16, build_pids=32, build_memory_mb=256))
    return served


@pytest.mark.parametrize("case", list(HOSTILE_BUILDS))
async def test_a_hostile_build_is_stopped_and_rejected(strict: Served, case: str) -> None:
    build, said = HOSTILE_BUILDS[case]
    folder = bot_folder(strict.tmp / "bot", "hostile", build=build)
    sub = (await strict.upload("alice", targz(folder))).json()["submission"]
    done = await strict.settled("alice", sub["id"], timeout=60)
    assert done["status"] == "rejected", done
    assert done["step"] == "build"
    assert said in done["output"]
    assert not Path("/usr/taki-evil").exists()
    files = strict.state.workspace.folder(strict.state.store.submission(sub["id"]))
    assert sum(f.stat().st_size for f in files.rglob("*") if f.is_file()) < 1 << 20
    assert [p for p in psutil.Process().children(recursive=True)
            if p.status() != psutil.STATUS_ZOMBIE] == []
    # nothing else affected: the next upload builds and passes
    good = bot_folder(strict.tmp / "good", "good", build="echo built > built.txt")
    sub = (await strict.upload("bob", targz(good))).json()["submission"]
    done = await strict.settled("bob", sub["id"])
    assert done["status"] == "active", done["output"]


async def test_a_c_bot_is_compiled_by_its_build(served: Served) -> None:
    if shutil.which("cc") is None:
        pytest.fail("a C compiler is needed: ./tasks test installs it")
    folder = served.tmp / "cbot"
    shutil.copytree(REPO / "sample_bots" / "c", folder,
                    ignore=shutil.ignore_patterns("taki_bot", "*.o"))
    (folder / "bot.toml").write_text('name = "cbot"\ncommand = "./taki_bot"\nbuild = "make"\n')
    sub = (await served.upload("alice", targz(folder))).json()["submission"]
    done = await served.settled("alice", sub["id"])
    assert done["status"] == "active", done["output"]
    assert "cc " in done["output"]  # the build's own output is kept
    built = served.state.workspace.bot_dir(served.state.store.submission(sub["id"]))
    assert (built / "taki_bot").stat().st_mode & 0o111


async def test_a_javascript_bot_with_its_node_modules_passes(served: Served) -> None:
    source = REPO / "sample_bots" / "js"
    if not (source / "node_modules").is_dir() or shutil.which("node") is None:
        pytest.fail("the JavaScript sample bot needs node and its npm packages:"
                    " ./tasks test installs them")
    folder = served.tmp / "jsbot"
    shutil.copytree(source, folder)
    (folder / "bot.toml").write_text('name = "jsbot"\ncommand = "node bot.js"\n')
    sub = (await served.upload("alice", targz(folder))).json()["submission"]
    done = await served.settled("alice", sub["id"])
    assert done["status"] == "active", done["output"]


def _nice_levels(pid: int) -> tuple[int, int | None]:
    """A process's nice value, and its session's autogroup's (None without autogroups)."""
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    nice = int(stat[stat.rfind(b")") + 2:].split()[16])
    try:
        autogroup = int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except OSError:
        autogroup = None
    return nice, autogroup


async def test_the_build_and_the_checks_bots_run_at_a_lowered_priority(served: Served) -> None:
    import os
    import uuid

    import trio
    from processes import processes_naming

    from referee.competition.build import NICENESS

    mark = uuid.uuid4().hex
    bot = f"nicebot_{mark}.py"
    folder = bot_folder(served.tmp / "nice", "nice", command=f"python {bot} 1",
                        build=f"sleep 1.5  # build-{mark}",
                        extra={bot: (REPO / "sample_bots" / "random_bot.py").read_text()})
    answer = await served.upload("alice", targz(folder))
    sub = answer.json()["submission"]["id"]
    seen: dict[str, set[tuple[int, int | None]]] = {"build": set(), "check": set()}
    with trio.fail_after(120):
        while (await served.client.get(f"/api/submissions/{sub}", headers=served.auth(
                "alice"))).json()["submission"]["status"] not in ("active", "rejected"):
            for step, needle in (("build", f"build-{mark}"), ("check", bot)):
                for pid in processes_naming(needle):
                    with contextlib.suppress(OSError, IndexError, ValueError):
                        seen[step].add(_nice_levels(pid))
            await trio.sleep(0.02)
    done = await served.settled("alice", sub)
    assert done["status"] == "active", done["output"]
    own = os.getpriority(os.PRIO_PROCESS, 0)
    for step, levels in seen.items():
        assert levels, f"no process of the {step} was seen"
        # read from /proc: the process and its session (the kernel shares the CPUs
        # between sessions first) are niced
        assert {nice for nice, _ in levels} == {own + NICENESS}, (step, levels)
        assert {group for _, group in levels} <= {NICENESS, None}, (step, levels)
    if Path("/proc/self/autogroup").exists():
        assert all(group == NICENESS for _, group in seen["check"]), seen
