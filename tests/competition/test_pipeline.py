"""The submission pipeline after a stop: what a killed server left half-made is removed,
and a submission it was building or checking is built and checked again, once."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from served import uploaded

from referee.competition.pipeline import run_pipeline
from referee.competition.records import Status
from referee.compliance.run import CheckSettings


@pytest.mark.slow
async def test_a_stopped_servers_leftovers_go_and_its_work_is_done_again(
        tmp_path: Path) -> None:
    config, store, workspace, sub = uploaded(tmp_path)
    # as a server killed during the check leaves it:
    assert store.start(sub.id, Status.CHECKING)
    (workspace.folder(sub) / "logs").mkdir()
    (workspace.incoming / "half.upload").write_bytes(b"half an upload")
    (workspace.uploads / "0123abcd").mkdir()  # unpacked, never stored
    changed = trio.Event()
    send, receive = trio.open_memory_channel[None](1)
    async with trio.open_nursery() as nursery:
        await nursery.start(run_pipeline, store, config, workspace, receive, changed.set)
        assert list(workspace.incoming.iterdir()) == []
        assert [p.name for p in workspace.uploads.iterdir()] == [sub.folder]
        with trio.fail_after(60):
            await changed.wait()
        nursery.cancel_scope.cancel()
    done = store.submission(sub.id)
    assert done.status is Status.ACTIVE, done.output
    assert (done.entrant, done.attempts) == ("rnd@1", 2)
    scenarios = done.output.split()[1]
    assert done.output.startswith(f"check: {scenarios} of {scenarios} scenarios passed")
    assert [s.id for s in store.submissions()] == [sub.id]
    send.close()


async def test_a_scenario_that_fails_once_runs_again_before_a_rejection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded machine can make a sound bot miss a short limit once: only what fails
    twice rejects the bot."""
    from referee.competition import pipeline
    from referee.compliance.outcome import BotReport, ScenarioOutcome

    runs: list[frozenset[str]] = []

    async def flaky_once(spec: object, settings: CheckSettings) -> BotReport:
        runs.append(settings.only)
        late = ScenarioOutcome("error-mid-game", "lifecycle", "exit within 200 ms",
                               problem=None if runs[1:] else "still running after 200 ms")
        fine = ScenarioOutcome("decide-play", "decide", "play a card")
        outcomes = (late,) if settings.only else (late, fine)
        return BotReport("rnd-check", "python random_bot.py", outcomes, 1.0)

    monkeypatch.setattr(pipeline, "check_bot", flaky_once)
    config, store, workspace, sub = uploaded(tmp_path)
    done = await pipeline.process(sub, store, config, workspace)
    assert done.status is Status.ACTIVE
    assert runs == [frozenset(), frozenset({"error-mid-game"})]
    assert "error-mid-game on a second run" in done.output
    # The server's words are those of `taki-referee check`: "N of M scenarios passed".
    assert done.output.startswith("check: 2 of 2 scenarios passed (")


def test_a_rejection_counts_the_scenarios_as_check_does() -> None:
    from referee.competition.pipeline import describe_check
    from referee.compliance.outcome import BotReport, ScenarioOutcome

    outcomes = (ScenarioOutcome("handshake", "lifecycle", "answer hello", problem="silent"),
                ScenarioOutcome("decide-play", "decide", "play a card"))
    text = describe_check(BotReport("b", "./b", outcomes, 1.0), 2)
    assert text.splitlines()[0] == "check: 1 of 2 scenarios passed, 1 failed (twice)"


async def test_a_rejection_shows_the_bots_last_stderr_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The participant cannot see the server's log files: the rejection's output holds
    the bot's last stderr lines, and the scenarios it never played fold into one line."""
    from referee.competition import pipeline
    from referee.compliance.outcome import BotReport, ScenarioOutcome

    traceback = "Traceback (most recent call last):\n  ...\nKeyError: 'card'"

    async def crashes(spec: object, settings: CheckSettings) -> BotReport:
        crash = ScenarioOutcome("handshake", "lifecycle", "hello", problem="failed (crash)",
                                stderr=traceback)
        unplayed = [ScenarioOutcome(f"s{i}", "decide", "a turn", stderr=traceback,
                                    problem="not played: the bot failed its handshake")
                    for i in range(41)]
        return BotReport("rnd-check", "python random_bot.py", (crash, *unplayed), 1.0)

    monkeypatch.setattr(pipeline, "check_bot", crashes)
    config, store, workspace, sub = uploaded(tmp_path)
    done = await pipeline.process(sub, store, config, workspace)
    assert done.status is Status.REJECTED
    assert done.output.splitlines() == [
        "check: 0 of 42 scenarios passed, 42 failed (twice)",
        "FAIL handshake: failed (crash)",
        "41 scenarios not played: the bot failed its handshake",
        "the bot's last lines on stderr (in handshake):",
        "  | Traceback (most recent call last):",
        "  |   ...",
        "  | KeyError: 'card'",
    ]
