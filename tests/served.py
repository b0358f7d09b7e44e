"""Helpers of the competition tests: bot folders, archives, and an in-process
competition server (the Starlette application with its submission pipeline, driven
through httpx's ASGI transport, no socket)."""

from __future__ import annotations

import io
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio

from referee.competition.config import CompetitionConfig, SandboxSection, SubmissionSection
from referee.competition.pipeline import run_pipeline
from referee.competition.store import CompetitionStore
from referee.competition.tokens import organizer_token
from referee.competition.workspace import Workspace
from referee.core.clock import TimeControl
from referee.server.app import build_app
from referee.server.state import ServerState

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


@attrs.define
class Served:
    client: httpx.AsyncClient
    state: ServerState
    tokens: dict[str, str]
    organizer: str
    tmp: Path

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


def served_factory(tmp_path: Path, nursery: trio.Nursery) -> Factory:
    """``await make(submissions=..., sandbox=...)``: a served competition with
    participants alice and bob."""

    async def make(**sections: Any) -> Served:
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
        state = ServerState(config, store, workspace, organizer_digest, send)
        await nursery.start(run_pipeline, store, config, workspace, receive, lambda: None)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(state)),
                                   base_url="http://competition.test")
        organizer = config.organizer_token_path.read_text().strip()
        return Served(client, state, tokens, organizer, tmp_path)

    return make
