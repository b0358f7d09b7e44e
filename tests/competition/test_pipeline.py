"""The submission pipeline after a stop: what a killed server left half-made is removed,
and a submission it was building or checking is built and checked again, once."""

from __future__ import annotations

from pathlib import Path

import trio
from served import bot_folder, targz

from referee.competition.config import CompetitionConfig
from referee.competition.pipeline import Workspace, accept_upload, run_pipeline
from referee.competition.records import Status
from referee.competition.store import CompetitionStore


async def test_a_stopped_servers_leftovers_go_and_its_work_is_done_again(
        tmp_path: Path) -> None:
    config = CompetitionConfig(path=tmp_path / "competition.toml")
    store = CompetitionStore(tmp_path / "c.sqlite")
    store.add_participant("alice")
    workspace = Workspace(tmp_path / "files")
    workspace.create()
    archive = workspace.incoming / "a.upload"
    archive.write_bytes(targz(bot_folder(tmp_path / "bot", "rnd")))
    sub = accept_upload(store, config, workspace, "alice", archive)
    assert not archive.exists()
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
    assert [s.id for s in store.submissions()] == [sub.id]
    send.close()
