"""taki-referee check: exit statuses, plain lines, the table on a terminal, --json."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonout import strict_json

from referee.cli.main import main
from referee.compliance.run import scenario_catalogue

REPO = Path(__file__).resolve().parents[2]
RANDOM = f"random=python {REPO / 'sample_bots' / 'random_bot.py'} 2"
HOSTILE = REPO / "tests" / "hostile_bots"
REACT_OUT_OF_RANGE = f"python {HOSTILE / 'react_out_of_range.py'}"
TIME_ARGS = ["--move-ms", "5000", "--reaction-ms", "5000", "--startup-ms", "20000"]


def check(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> tuple[int, str]:
    code = main(["check", *args, *TIME_ARGS, "--log-dir", str(tmp_path / "logs")])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.slow
def test_json_of_a_passing_and_a_failing_bot(capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    code, out = check(capsys, tmp_path, RANDOM, REACT_OUT_OF_RANGE, "--json")
    assert code == 1
    report = strict_json(out)
    assert set(report) == {"passed", "bots"} and report["passed"] is False
    good, bad = report["bots"]
    for bot in (good, bad):
        assert set(bot) == {"bot", "command", "passed", "scenarios", "failed", "seconds",
                            "outcomes"}
        assert bot["scenarios"] == len(bot["outcomes"]) == len(scenario_catalogue())
        for outcome in bot["outcomes"]:
            assert set(outcome) == {"name", "group", "summary", "passed", "problem",
                                    "request", "answer", "fault", "stderr", "log"}
    assert good["bot"] == "random" and good["passed"] is True and good["failed"] == 0
    assert all(o["problem"] is None and o["request"] is None and o["log"] is None
               for o in good["outcomes"])
    assert bad["bot"] == "react_out_of_range" and bad["passed"] is False
    holder = next(o for o in bad["outcomes"] if o["name"] == "react-holder")
    assert holder["passed"] is False and holder["problem"] == "forfeited (illegal)"
    assert holder["request"]["type"] == "react"
    assert holder["request"]["legal"] == [{"kind": "break"}, {"kind": "pass"}]
    assert holder["answer"] == {"type": "action", "id": holder["request"]["id"], "choice": 2,
                                "last_card": True}
    assert holder["fault"] == {"reason": "illegal",
                               "detail": "choice 2 is not an index of the 2 legal actions"}
    assert holder["stderr"] == ""
    assert holder["log"].startswith(str(tmp_path / "logs" / "check-react_out_of_range."))


def test_plain_lines_name_the_failing_react_scenario(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    code, out = check(capsys, tmp_path, REACT_OUT_OF_RANGE, "--scenario", "react-holder",
                      "--scenario", "decide-king")
    assert code == 1
    lines = out.splitlines()
    log = tmp_path / "logs" / "check-react_out_of_range.1.log"
    assert lines[1:] == [
        "pass decide-king: a King's free action: any card, or end the turn",
        "FAIL react-holder: forfeited (illegal)",
        "     request: react id 13: phase react, hand [green:6, blue:1, blue:4, +3_breaker],"
        " legal [break, pass]",
        "     the bot: illegal: choice 2 is not an index of the 2 legal actions",
        "     its stderr: nothing",
        f"     its log: {log}",
        lines[-1],
    ]
    assert lines[-1].startswith("react_out_of_range: 1 of 2 scenarios passed in ")
    assert lines[-1].endswith(" s, 1 failed")


def test_a_crash_shows_the_request_the_last_stderr_lines_and_the_log(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = check(capsys, tmp_path, f"python {HOSTILE / 'crash_on_combo.py'}",
                      "--scenario", "flag-plus3-rule")
    assert code == 1
    lines = out.splitlines()
    log = tmp_path / "logs" / "check-crash_on_combo.1.log"
    assert lines[1] == "FAIL flag-plus3-rule: forfeited (crash)"
    assert lines[2].startswith("     request: decide id ")
    assert lines[2].endswith("legal [play red:3, play red:plus, play_combo red]")
    assert lines[3] == "     the bot: crash: closed its output: the bot exited with status 1"
    assert lines[4] == "     its last stderr lines:"
    stderr = lines[5:-2]
    assert stderr[0].endswith("a play_combo entry, which this bot does not know")
    assert stderr[-1] == "       | KeyError: 'card'"
    assert all(line.startswith("       | ") for line in stderr)
    assert lines[-2] == f"     its log: {log}"
    assert "KeyError: 'card'" in log.read_text()


def test_a_timeout_shows_the_last_stderr_lines_in_json(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    code = main(["check", f"python {HOSTILE / 'stuck_thinking.py'} 0", "--json",
                 "--scenario", "players-10", "--move-ms", "300", "--startup-ms", "20000",
                 "--log-dir", str(tmp_path / "logs")])
    assert code == 1
    [outcome] = strict_json(capsys.readouterr().out)["bots"][0]["outcomes"]
    assert outcome["problem"] == ("forfeited (timeout): allowed deadline_ms 300 ms plus 5 ms"
                                  " of grace")
    # It sleeps: on the CPU basis (the default) it is ended at the wall-time cap.
    assert outcome["fault"]["reason"] == "timeout"
    assert outcome["fault"]["detail"].startswith("no answer within")
    assert "300 ms + 5 ms grace" in outcome["fault"]["detail"]
    assert outcome["stderr"] == f"request {outcome['request']['id']}: thinking..."
    assert outcome["log"] == str(tmp_path / "logs" / "check-stuck_thinking.1.log")


def test_table_on_a_terminal(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "160")
    code, out = check(capsys, tmp_path, RANDOM, "--scenario", "decide-king")
    assert code == 0
    assert "┃ scenario" in out.replace("\x1b[1m", "").replace("\x1b[0m", "")
    assert "decide-king" in out and "a King's free action" in out and "pass" in out


@pytest.mark.parametrize("args, problem", [
    ([], "check needs at least one BOT"),
    (["python bot.py", "--scenario", "nope"], "--scenario nope: no such scenario"),
    (["alice=remote"], "bot alice: check starts the bot itself"),
])
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                             args: list[str], problem: str) -> None:
    code, out = check(capsys, tmp_path, *args)
    assert code == 2 and problem in out


def test_list(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = check(capsys, tmp_path, "--list")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == [
        name for name, _, _ in scenario_catalogue()]
