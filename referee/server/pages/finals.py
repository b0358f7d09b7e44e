"""The finals' public page: their progress while they are played, then the final
standings, each bot with its participant and a link to its page of the finals' report
(its games there), and the finals' report (its files served under ``/finals/report/``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import trio
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from referee.competition import (
    FINALS_REPORT,
    Workspace,
    finals_db,
    finals_folder,
    played_games,
)
from referee.present import bots_folder, page_name
from referee.server.pages.public import site_of

__all__ = ["finals_page", "report_files"]


async def finals_page(request: Request) -> Response:
    site = site_of(request)
    session = await site.sessions.of(request)
    progress = site.state.finals
    db = finals_db(site.state.store.path)
    played = await site.run(lambda: played_games(db))
    plan = progress.plan
    await site.refresh()
    pages = bots_folder(Path(FINALS_REPORT)).name

    def build() -> dict[str, Any]:
        def owner(bot: str) -> str | None:
            sub = site.entrants.get(bot)
            return None if sub is None else sub.participant

        return {"phase": progress.phase.value, "played": played, "total": progress.total,
                "standings": [(s, owner(s.bot), f"/finals/report/{quote(pages)}/"
                               f"{quote(page_name(s.bot))}") for s in progress.standings],
                "entrants": [(bot, owner(bot)) for bot in (plan.entrants if plan else ())]}

    return await site.page(request, "finals.html", build, session=session, keep=False)


class ReportFiles:
    """The finals' report and its bots' pages, once written (404 before)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files = StaticFiles(directory=folder, check_dir=False)
        self.written = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.written:
            self.written = await trio.to_thread.run_sync(self.folder.is_dir)
        if not self.written:
            await PlainTextResponse("the finals' report is not written yet",
                                    status_code=404)(scope, receive, send)
            return
        await self.files(scope, receive, send)


def report_files(workspace: Workspace) -> ReportFiles:
    return ReportFiles(finals_folder(workspace))
