"""A participant's command cannot open the host to its bot (issue: a bot.toml whose
command named ``../../../../organizer.token`` read the organizer's token and sent it
back through the check). Through the competition's own pipeline: the upload is
unpacked, stored and checked in the sandbox as ``serve`` does it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import trio
from served import bot_folder, targz, uploaded

from referee.competition.accept import accept_upload
from referee.competition.bot_specs import bot_spec
from referee.competition.build import build_command
from referee.competition.config import CompetitionConfig
from referee.competition.pipeline import run_pipeline
from referee.competition.records import Status, Submission
from referee.competition.store import CompetitionStore
from referee.competition.workspace import Workspace

HOSTILE = Path(__file__).resolve().parents[1] / "hostile_bots"
TOKEN = "3b1f00a9c0ffee4d"
#: What the leaker answers with when it reads the token: the check would print it.
LEAKED = str(int(TOKEN[:7], 16) + 1000)


async def _checked(tmp_path: Path, argument: str) -> tuple[Submission, Path]:
    """The submission of a leaker whose command ends with ``argument`` (a path from the
    bot's folder to the token, where ``{up}`` stands for the ``../`` that reach the
    competition's folder; ``@path.txt``: that path is in a file), once checked."""
    config = CompetitionConfig(path=tmp_path / "competition.toml")
    (tmp_path / "organizer.token").write_text(TOKEN + "\n")
    store = CompetitionStore(tmp_path / "competition.sqlite")
    store.add_participant("mallory")
    workspace = Workspace(tmp_path / "files")
    workspace.create()
    folder = bot_folder(tmp_path / "bot", "leak", command="python leaker.py ARG")
    for name in ("leaker.py", "_common.py"):
        shutil.copy(HOSTILE / name, folder / name)
    # The bot will run from files/uploads/<folder>/source: four levels below tmp_path.
    up = "../../../../"
    (folder / "path.txt").write_text(f"{up}organizer.token\n")
    manifest = (folder / "bot.toml").read_text().replace("ARG", argument.format(up=up))
    (folder / "bot.toml").write_text(manifest)
    archive = workspace.incoming / "a.upload"
    archive.write_bytes(targz(folder))
    sub = accept_upload(store, config, workspace, "mallory", archive).submission
    assert os.path.relpath(tmp_path, workspace.bot_dir(sub)) == up.rstrip("/")
    _, receive = trio.open_memory_channel[None](1)
    async with trio.open_nursery() as nursery:
        await nursery.start(run_pipeline, store, config, workspace, receive, lambda: None)
        with trio.fail_after(120):
            while store.submission(sub.id).status in (Status.QUEUED, Status.BUILDING,
                                                      Status.CHECKING):
                await trio.sleep(0.2)
        nursery.cancel_scope.cancel()
    return store.submission(sub.id), workspace.folder(sub)


def _everything_written(folder: Path, sub: Submission) -> str:
    logs = "".join(p.read_text(errors="replace") for p in folder.rglob("*.log"))
    return (sub.output or "") + logs


async def test_a_command_naming_the_token_is_refused(tmp_path: Path) -> None:
    sub, folder = await _checked(tmp_path, "{up}organizer.token")
    assert sub.status is Status.REJECTED
    assert "names a path outside the bot's folder" in (sub.output or ""), sub.output
    written = _everything_written(folder, sub)
    assert LEAKED not in written and TOKEN[:7] not in written


@pytest.mark.slow  # the whole check, every scenario, in the sandbox
async def test_a_path_the_command_does_not_name_is_not_in_the_sandbox(tmp_path: Path) -> None:
    sub, folder = await _checked(tmp_path, "@path.txt")
    written = _everything_written(folder, sub)
    assert "leaker: cannot read" in written, written
    assert LEAKED not in written and TOKEN[:7] not in written
    assert sub.status is Status.ACTIVE, sub.output  # it plays on as a random bot


def test_serve_runs_every_bot_in_the_sandbox(tmp_path: Path) -> None:
    # The build, the check and the ladder (and the finals) start bots from these two.
    config, _, workspace, sub = uploaded(tmp_path)
    command = bot_spec(sub, "rnd", config, workspace).command
    assert command is not None and command.sandbox is not None
    assert build_command(workspace.bot_dir(sub), "make", config.sandbox).sandbox is not None
