"""``taki-referee serve``: one trio run holds the HTTP API (Hypercorn's trio worker), the
submission pipeline and the ladder.

Nothing here keeps state of its own: the database holds every participant, submission
and game, so a server killed at any moment (even with SIGKILL) goes on where it was when
the same command starts again.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve

from referee.competition import (
    CompetitionConfig,
    CompetitionError,
    CompetitionHost,
    CompetitionStore,
    Workspace,
    check_sandbox,
    make_private,
    organizer_token,
    run_pipeline,
)
from referee.server.app import build_app
from referee.server.finals_link import run_finals_link
from referee.server.ladder_link import run_ladder_link
from referee.shell import format_address

__all__ = ["serve_competition"]

#: A request's headers must arrive within this time (slow clients hold no worker long).
READ_TIMEOUT_S: Final = 60


async def serve_competition(
    config: CompetitionConfig, db: Path, host: str, port: int, *,
    say: Callable[[str], None] = print,
    shutdown: Callable[[], Awaitable[None]] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the competition until cancelled (or until ``shutdown`` returns); started:
    the address it listens on (``host:port``)."""
    check_sandbox(config)
    store = await trio.to_thread.run_sync(CompetitionStore, db)
    await trio.to_thread.run_sync(make_private, db)
    try:
        workspace = Workspace(config.files_dir(db))
        await trio.to_thread.run_sync(workspace.create)
        organizer, created = await trio.to_thread.run_sync(
            organizer_token, config.organizer_token_path)
        if created:
            say(f"the organizer's token is in {config.organizer_token_path}")
        send, receive = trio.open_memory_channel[None](1)
        state = CompetitionHost(config, store, workspace, organizer, send)
        await state.open_season()
        web = HypercornConfig()
        listen = format_address(host, port)
        web.bind = [listen]
        web.accesslog = None  # no request lines: nothing of a request is ever logged
        web.errorlog = "-"
        web.read_timeout = READ_TIMEOUT_S
        async with trio.open_nursery() as nursery:

            async def web_server(task_status: trio.TaskStatus[list[str]]) -> None:
                try:
                    await hypercorn_serve(build_app(state), web,  # type: ignore[arg-type]
                                          shutdown_trigger=shutdown, task_status=task_status)
                except* OSError as group:  # the address is taken, or not this machine's
                    problem: BaseException = group
                    while isinstance(problem, BaseExceptionGroup):
                        problem = problem.exceptions[0]
                    detail = getattr(problem, "strerror", None) or str(problem)
                    raise CompetitionError(f"cannot listen on {listen}: {detail}") from None
                nursery.cancel_scope.cancel()  # shut down: the rest stops with it

            binds = await nursery.start(web_server)  # first: a taken port stops it all
            ladder_changed = await nursery.start(run_ladder_link, state, db)
            await nursery.start(functools.partial(
                run_pipeline, unpackers=state.uploads.unpackers), store, config, workspace,
                receive, ladder_changed)
            # The finals, once begun from the organizer's page (at once when a kill
            # interrupted them): their games, then their report.
            await nursery.start(functools.partial(run_finals_link, say=say), config, store,
                                workspace, state.finals)
            address = binds[0].removeprefix("http://") if binds else listen
            say(f"competition {config.competition.name!r}: serving on http://{address}"
                f" (database {db}, files in {workspace.root})")
            sys.stdout.flush()
            task_status.started(address)
    finally:
        store.close()
