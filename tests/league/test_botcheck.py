"""The bot check: every way a bot can fail to start, and what is left behind (nothing)."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import pytest
from processes import live_children

from referee.config.bot_commands import make_command, parse_bot_arg
from referee.core.clock import TimeControl
from referee.core.faults import BotStartError
from referee.core.specs import BotSpec
from referee.league.botcheck import (
    BotCheckError,
    BotCheckFailure,
    check_bot,
    check_bots,
    require_bots,
)

REPO = Path(__file__).resolve().parents[2]
RANDOM = f"python {REPO / 'sample_bots' / 'random_bot.py'}"
HOSTILE = REPO / "tests" / "hostile_bots"
TIME = TimeControl(startup_ms=10_000)


def bot(command: str, name: str = "b", origin: str | None = "league.toml:7") -> BotSpec:
    return BotSpec(name, make_command(command), origin)


async def test_a_working_bot_passes_and_leaves_nothing_running() -> None:
    assert await check_bot(bot(f"{RANDOM} 1"), TIME) is None
    assert live_children(zombies=True) == []


@pytest.mark.parametrize("command, problem, stderr", [
    ("no-such-bot-binary --fast", "executable 'no-such-bot-binary' not found", ""),
    ("python no_such_bot.py", "exited with status 2 before its handshake",
     "can't open file"),
    ("python -c 'import sys; print(\"cannot load weights\", file=sys.stderr); sys.exit(4)'",
     "exited with status 4 before its handshake", "cannot load weights"),
    ("python -c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'",
     "killed by signal SIGKILL before its handshake", ""),
    ("python -c 'import sys, time; sys.stdout.write(\"hi\\n\"); sys.stdout.flush(); "
     "time.sleep(60)'", "protocol error in its handshake: ", ""),
    (f"python {HOSTILE / 'wrong_version.py'}", "protocol error in its handshake: ", ""),
    ("sleep 60", "no handshake within 300 ms", ""),
])
async def test_each_failure_says_what_happened(
    tmp_path: Path, command: str, problem: str, stderr: str
) -> None:
    spec = BotSpec("ghost", make_command(command, cwd=str(tmp_path)), "league.toml:12")
    # Only the silent bot must run out of time: the others get a startup time that a
    # Python bot on a loaded machine never needs, so each fails for its own reason.
    startup_ms = 300 if problem.startswith("no handshake within") else 10_000
    failure = await check_bot(spec, TimeControl(startup_ms=startup_ms))
    assert failure is not None
    assert failure.problem.startswith(problem)
    assert stderr in failure.stderr
    assert (failure.bot, failure.origin, failure.cwd) == ("ghost", "league.toml:12", str(tmp_path))
    assert failure.command == spec.display
    text = failure.describe()
    assert text.startswith(f"league.toml:12: bot 'ghost' failed the bot check: {problem}")
    assert f"\n  command: {spec.display}\n" in text
    assert f"\n  working directory: {tmp_path}" in text
    if stderr:
        assert "\n  last lines of its stderr:\n    " in text and stderr in text
    # The bot and everything it started are gone.
    assert live_children(zombies=True) == []


CLOSES_OUTPUT = "python -c 'import os, time; os.close(1); time.sleep(60)'"


async def test_a_bot_that_closes_its_output_says_so(tmp_path: Path, uncontained: None) -> None:
    spec = BotSpec("ghost", make_command(CLOSES_OUTPUT, cwd=str(tmp_path)), "league.toml:12")
    failure = await check_bot(spec, TimeControl(startup_ms=10_000))
    assert failure is not None
    assert failure.problem.startswith("closed its output before its handshake")
    assert live_children(zombies=True) == []


async def test_a_contained_bot_that_closes_its_output_is_silent(tmp_path: Path) -> None:
    # bwrap holds the bot's output too: the referee sees a bot that says nothing.
    spec = BotSpec("ghost", make_command(CLOSES_OUTPUT, cwd=str(tmp_path)), "league.toml:12")
    failure = await check_bot(spec, TimeControl(startup_ms=2000))
    assert failure is not None
    assert failure.problem.startswith("no handshake within 2000 ms")
    assert live_children(zombies=True) == []


async def test_a_bot_whose_python_lacks_the_sdk_is_told_to_start_with_python(
    tmp_path: Path,
) -> None:
    # Started by its #! line with a Python that cannot import taki_protocol (-S: no
    # site-packages), as a bot is with a system Python.
    script = tmp_path / "my_bot.py"
    script.write_text(f"#!{sys.executable} -S\nimport taki_protocol\n")
    script.chmod(0o755)
    failure = await check_bot(BotSpec("mine", make_command(str(script))), TIME)
    assert failure is not None
    assert "No module named 'taki_protocol'" in failure.stderr
    assert failure.hint().startswith("the Python that runs the bot")
    assert '\n  hint: the Python that runs the bot' in failure.describe()
    assert 'start it with python ("python bot.py"' in failure.describe()
    working = await check_bot(bot(f"{RANDOM} 1"), TIME)
    assert working is None


async def test_bots_are_checked_at_the_same_time(tmp_path: Path) -> None:
    # Each bot says hello only once all three have started: a check one bot after the
    # other would see the first one give up and exit.
    script = tmp_path / "rendezvous.py"
    script.write_text(f"""\
import pathlib, runpy, sys, time
here = pathlib.Path({str(tmp_path)!r})
(here / ("started-" + sys.argv[1])).touch()
deadline = time.monotonic() + 20
while len(list(here.glob("started-*"))) < 3:
    if time.monotonic() > deadline:
        sys.exit(1)
    time.sleep(0.01)
sys.argv = [{str(REPO / "sample_bots" / "random_bot.py")!r}, sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
""")
    bots = [bot(f"python {script} {i}", f"b{i}") for i in range(3)]
    assert await check_bots(bots, TimeControl(startup_ms=30_000)) == []


async def test_no_more_bots_at_once_than_the_limit(tmp_path: Path) -> None:
    # Each bot notes when it starts and when it exits; with a limit of 2, no third bot
    # may start while two are running.
    script = tmp_path / "noted.py"
    log = tmp_path / "log"
    script.write_text(f"""\
import atexit, os, runpy, sys
def note(what):
    with open({str(log)!r}, "a") as f:
        f.write(what + "\\n")
note("start")
atexit.register(note, "end")
sys.argv = [{str(REPO / "sample_bots" / "random_bot.py")!r}, sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
""")
    bots = [bot(f"python {script} {i}", f"b{i}") for i in range(5)]
    assert await check_bots(bots, TIME, limit=2) == []  # without the limit: all 5 at once
    running = most = 0
    for line in log.read_text().split():
        running += 1 if line == "start" else -1
        most = max(most, running)
    assert running == 0 and 1 <= most <= 2


async def test_a_shared_command_is_started_once_and_reported_for_each_bot(
    tmp_path: Path,
) -> None:
    starts = tmp_path / "starts"
    script = tmp_path / "count.py"
    script.write_text(f"open({str(starts)!r}, 'a').write('x')\n")  # then exits: no hello
    command = f"python {script}"
    bots = [
        bot(command, "first", "league.toml:3"),
        BotSpec("far", None),  # a remote seat: it joins later, nothing to start
        bot(command, "second", "league.toml:7"),
        bot(f"{RANDOM} 1", "fine", "league.toml:11"),
    ]
    failures = await check_bots(bots, TIME)
    assert starts.read_text() == "x"
    assert [(f.bot, f.origin) for f in failures] == [
        ("first", "league.toml:3"), ("second", "league.toml:7"),
    ]
    assert all(f.problem == "exited with status 0 before its handshake" for f in failures)


async def test_require_bots_raises_one_error_per_failing_bot() -> None:
    bots = [parse_bot_arg("new=no-such-bot-a", 0, "NEW"), parse_bot_arg(RANDOM, 1, "OLD"),
            parse_bot_arg("third=no-such-bot-b", 2)]
    with pytest.raises(ExceptionGroup) as info:
        await require_bots(bots, TIME, limit=len(bots))
    errors = info.value.exceptions
    assert all(isinstance(e, BotCheckError) and isinstance(e, BotStartError) for e in errors)
    assert [str(e).splitlines()[0] for e in errors] == [
        "NEW: bot 'new' failed the bot check: executable 'no-such-bot-a' not found",
        "argument 3: bot 'third' failed the bot check: executable 'no-such-bot-b' not found",
    ]
    # Nothing to raise when every bot starts.
    await require_bots(bots[1:2], TIME, limit=1)


def test_a_check_error_survives_pickling() -> None:
    failure = BotCheckFailure("b", "x --fast", "exited with status 1 before its handshake",
                              "f.toml:2", "/tmp", "oops")
    error = pickle.loads(pickle.dumps(BotCheckError(failure)))
    assert error.failure == failure
    assert (error.command, error.problem) == ("x --fast", failure.problem)
    assert str(error) == failure.describe()


def test_a_bot_without_origin_or_cwd(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    failure = BotCheckFailure("b", "x", "executable 'x' not found")
    assert failure.describe() == (
        "bot 'b' failed the bot check: executable 'x' not found\n"
        f"  command: x\n  working directory: {tmp_path}"
    )


async def test_the_check_runs_the_real_command(tmp_path: Path) -> None:
    # The command's own working directory, environment and limits apply.
    script = tmp_path / "env_bot.py"
    script.write_text(f"""\
import os, resource, runpy, sys
assert os.getcwd() == {str(tmp_path)!r}, os.getcwd()
assert os.environ["BOT_LEVEL"] == "3"
assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 200
sys.argv = [{str(REPO / "sample_bots" / "random_bot.py")!r}, "1"]
runpy.run_path(sys.argv[0], run_name="__main__")
""")
    from referee.core.specs import ResourceLimits

    good = BotSpec("env", make_command("python env_bot.py", cwd=str(tmp_path),
                                       env={"BOT_LEVEL": "3"},
                                       limits=ResourceLimits(open_files=200)))
    assert await check_bot(good, TIME) is None
    bad = BotSpec("env", make_command("python env_bot.py", cwd=str(tmp_path),
                                      env={"BOT_LEVEL": "4"},
                                      limits=ResourceLimits(open_files=200)))
    failure = await check_bot(bad, TIME)
    assert failure is not None and "AssertionError" in failure.stderr
    assert sys.executable in failure.command
    assert live_children(zombies=True) == []
