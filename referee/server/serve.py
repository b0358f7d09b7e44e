"""``taki-referee serve``: one trio run holds the HTTP API (Hypercorn's trio worker), the
submission pipeline and the ladder.

Before it makes anything (the database, the files folder, the organizer's token) it
binds its port and claims its database, so a taken port or a database another program
serves is one line and leaves nothing behind.

Nothing here keeps state of its own: the database holds every participant, submission
and game, so a server killed at any moment (even with SIGKILL) goes on where it was when
the same command starts again.
"""

from __future__ import annotations

import contextlib
import functools
import socket
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
from referee.league import ResultStore, StoreError
from referee.server.app import build_app
from referee.server.finals_link import run_finals_link
from referee.server.history_link import run_history_link
from referee.server.ladder_link import run_ladder_link
from referee.server.loop_watch import watch_loop
from referee.server.middleware import QUEUED_MESSAGES
from referee.shell import format_address

__all__ = ["serve_competition"]

#: A request's headers must arrive within this time (slow clients hold no worker long).
READ_TIMEOUT_S: Final = 60


def bind_port(host: str, port: int) -> socket.socket:
    """The server's socket, bound to ``host:port`` (not listening yet); CompetitionError
    (one line) when the address is taken or not this machine's."""
    listen = format_address(host, port)
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise CompetitionError(f"cannot listen on {listen}: {exc.strerror}") from None
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Hypercorn does
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise CompetitionError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
    return sock


def claim_database(db: Path) -> ResultStore:
    """The competition's database, opened (made if new) and claimed for this server
    alone; CompetitionError (one line) when another program has it."""
    try:
        results = ResultStore(db)
    except StoreError as exc:
        raise CompetitionError(str(exc)) from None
    try:
        results.claim()
    except StoreError:
        results.close()
        raise CompetitionError(
            f"{db} is in use by another taki-referee (a serve of this competition, or a"
            " league or ladder run on it): stop that one first, or give another --db"
        ) from None
    return results


async def serve_competition(
    config: CompetitionConfig, db: Path, host: str, port: int, *,
    say: Callable[[str], None] = print,
    shutdown: Callable[[], Awaitable[None]] | None = None,
    timing: bool = False,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the competition until cancelled (or until ``shutdown`` returns); started:
    the address it listens on (``host:port``). With ``timing``, the event loop's
    figures go to ``say`` every half minute and every answer tells when its request
    arrived (:mod:`referee.server.loop_watch`)."""
    check_sandbox(config)
    sock = bind_port(host, port)
    with contextlib.ExitStack() as held:
        held.callback(sock.close)  # unless Hypercorn took it
        results = await trio.to_thread.run_sync(claim_database, db)
        held.callback(results.close)
        store = await trio.to_thread.run_sync(CompetitionStore, db)
        held.callback(store.close)
        await trio.to_thread.run_sync(make_private, db)
        await _serve(config, db, sock, results, store, say=say, shutdown=shutdown,
                     timing=timing, task_status=task_status)


async def _serve(config: CompetitionConfig, db: Path, sock: socket.socket,
                 results: ResultStore, store: CompetitionStore, *,
                 say: Callable[[str], None],
                 shutdown: Callable[[], Awaitable[None]] | None, timing: bool,
                 task_status: trio.TaskStatus[str]) -> None:
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
    listen = format_address(*sock.getsockname()[:2])
    web.bind = [f"fd://{sock.detach()}"]  # Hypercorn's socket from now on
    web.accesslog = None  # no request lines: nothing of a request is ever logged
    web.errorlog = "-"
    web.read_timeout = READ_TIMEOUT_S
    web.max_app_queue_size = QUEUED_MESSAGES  # a refused upload: little of it is read
    async with trio.open_nursery() as nursery:
        if timing:
            await nursery.start(functools.partial(watch_loop, say))

        async def web_server(task_status: trio.TaskStatus[list[str]]) -> None:
            try:
                await hypercorn_serve(build_app(state, timing=timing), web,  # type: ignore[arg-type]
                                      shutdown_trigger=shutdown, task_status=task_status)
            except* OSError as group:  # cannot listen on the socket bound
                problem: BaseException = group
                while isinstance(problem, BaseExceptionGroup):
                    problem = problem.exceptions[0]
                detail = getattr(problem, "strerror", None) or str(problem)
                raise CompetitionError(f"cannot listen on {listen}: {detail}") from None
            nursery.cancel_scope.cancel()  # shut down: the rest stops with it

        binds = await nursery.start(web_server)
        ladder_changed = await nursery.start(run_ladder_link, state, results)
        await nursery.start(run_history_link, state, db)
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
