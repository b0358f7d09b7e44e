"""Helpers of the competition tests: bot folders, archives, and an in-process
competition server (the Starlette application with its submission pipeline, driven
through httpx's ASGI transport, no socket).

The served competition checks its uploads with a stand-in (:class:`CheckStandIn`: every
bot passes and none is started) unless asked for the real check
(``make(real_check=True)``), which runs the compliance scenarios against the bot in the
sandbox as ``taki-referee serve`` does: the tests of the HTTP API and of the pages are
about requests, not about starting bots."""

from __future__ import annotations

import io
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
import trio

from referee.competition import pipeline
from referee.competition.accept import accept_upload
from referee.competition.config import CompetitionConfig, SandboxSection, SubmissionSection
from referee.competition.hosting import CompetitionHost
from referee.competition.pipeline import run_pipeline
from referee.competition.records import Submission
from referee.competition.store import CompetitionStore
from referee.competition.tokens import organizer_token
from referee.competition.workspace import Workspace
from referee.compliance import BotReport, CheckSettings, ScenarioOutcome
from referee.core import BotSpec
from referee.core.clock import TimeControl
from referee.server.app import build_app

REPO = Path(__file__).resolve().parents[1]
RANDOM_BOT = REPO / "sample_bots" / "random_bot.py"


def bot_folder(where: Path, name: str = "rnd", *, build: str | None = None,
               command: str = "python random_bot.py 1", extra: dict[str, str] | None = None,
               ) -> Path:
    """A folder with the random sample bot and its bot.toml."""
    where.mkdir(parents=True)
    shutil.copy(RANDOM_BOT, where / "random_bot.py")
    manifest = f'name = "{name}"\ncommand = "{command}"\n'
    if build is not None:
        manifest += f"build = '''{build}'''\n"
    (where / "bot.toml").write_text(manifest)
    for file, text in (extra or {}).items():
        (where / file).write_text(text)
    return where


def targz(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return buffer.getvalue()


def uploaded(tmp_path: Path) -> tuple[CompetitionConfig, CompetitionStore, Workspace,
                                      Submission]:
    """A competition with one participant, alice, whose upload of a random bot was just
    accepted (queued, nothing built yet)."""
    config = CompetitionConfig(path=tmp_path / "competition.toml")
    store = CompetitionStore(tmp_path / "c.sqlite")
    store.add_participant("alice")
    workspace = Workspace(tmp_path / "files")
    workspace.create()
    archive = workspace.incoming / "a.upload"
    archive.write_bytes(targz(bot_folder(tmp_path / "bot", "rnd")))
    sub = accept_upload(store, config, workspace, "alice", archive).submission
    assert not archive.exists()
    return config, store, workspace, sub


@attrs.define
class Served:
    client: httpx.AsyncClient
    state: CompetitionHost
    tokens: dict[str, str]
    organizer: str
    tmp: Path
    checks: CheckStandIn | None  # None: the real check

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    async def upload(self, who: str, body: bytes, **kwargs: Any) -> httpx.Response:
        return await self.client.post("/api/submissions", content=body,
                                      headers=self.auth(who), **kwargs)

    async def settled(self, who: str, submission: int, timeout: float = 120) -> dict[str, Any]:
        """The submission once built and checked (or rejected)."""
        with trio.fail_after(timeout):
            while True:
                answer = await self.client.get(f"/api/submissions/{submission}",
                                               headers=self.auth(who))
                sub: dict[str, Any] = answer.json()["submission"]
                if sub["status"] not in ("queued", "building", "checking"):
                    return sub
                await trio.sleep(0.2)


Factory = Callable[..., Any]


@attrs.define
class CheckStandIn:
    """The check's stand-in: the bot passes its one scenario, never started; once
    :meth:`hold` is called, the checks wait until :meth:`release`."""

    released: trio.Event | None = None

    def hold(self) -> None:
        self.released = trio.Event()

    def release(self) -> None:
        if self.released is not None:
            self.released.set()

    async def __call__(self, spec: BotSpec, settings: CheckSettings) -> BotReport:
        if self.released is not None:
            await self.released.wait()
        passed = ScenarioOutcome("handshake", "lifecycle", "the stand-in for the check")
        return BotReport(spec.name, spec.display, (passed,), 0.0)


def served_factory(tmp_path: Path, nursery: trio.Nursery,
                   monkeypatch: pytest.MonkeyPatch) -> Factory:
    """``await make(submissions=..., sandbox=..., real_check=False)``: a served
    competition with participants alice and bob."""

    async def make(*, real_check: bool = False, **sections: Any) -> Served:
        checks = None if real_check else CheckStandIn()
        if checks is not None:
            monkeypatch.setattr(pipeline, "check_bot", checks)
        config = CompetitionConfig(
            path=tmp_path / "competition.toml",
            time=TimeControl(move_ms=1000, startup_ms=10_000),
            submissions=sections.get("submissions", SubmissionSection()),
            sandbox=sections.get("sandbox", SandboxSection(build_seconds=60)),
        )
        store = CompetitionStore(tmp_path / "competition.sqlite")
        tokens = {name: store.add_participant(name) for name in ("alice", "bob")}
        workspace = Workspace(config.files_dir(tmp_path / "competition.sqlite"))
        workspace.create()
        organizer_digest, _ = organizer_token(config.organizer_token_path)
        send, receive = trio.open_memory_channel[None](1)
        state = CompetitionHost(config, store, workspace, organizer_digest, send)
        await nursery.start(run_pipeline, store, config, workspace, receive, lambda: None)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(state)),
                                   base_url="http://competition.test")
        organizer = config.organizer_token_path.read_text().strip()
        return Served(client, state, tokens, organizer, tmp_path, checks)

    return make
