"""Helpers of the pages' tests: games written straight into a served competition's
database, with their replays and stderr logs, and signing in through the form."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from served import Served

from referee.core.replay import Replay
from referee.league.store import GameRecord, Meeting, ResultStore, SeatRecord
from referee.match.game import replay_path, safe_filename
from referee.rules import Rules
from referee.server.app import build_app


def entrant(served: Served, participant: str, bot: str) -> str:
    """A bot of ``participant`` that passed its check (no build, no check run)."""
    store = served.state.store
    sub = store.add_submission(participant, bot, "python bot.py", None,
                               f"{participant}-{bot}-{len(store.submissions())}",
                               per_day=100, max_pending=100)
    done = store.activate(sub.id, "passed", active_bots=100)
    assert done.entrant is not None
    return done.entrant


def add_game(served: Served, table: tuple[str, ...], deal: int, rotation: int = 0, *,
             places: tuple[int, ...] | None = None, forfeit: tuple[int, str] | None = None,
             log: dict[str, str] | None = None, replay: bool = False) -> str:
    """Store a game of ``table`` (seats in table order) as the ladder would: its meeting,
    its record, and when asked its replay and each named bot's stderr log."""
    root = served.state.workspace.root
    db = served.state.store.path
    game_id = f"{','.join(table)}/deal{deal}/rot{rotation}"
    places = places or tuple(range(1, len(table) + 1))
    replay_file = None
    if replay:
        record = Replay(game_id, 12345 + deal, Rules(), list(table))
        if forfeit is not None:
            record.record_forfeit(forfeit[0], "crash", forfeit[1])
        replay_file = replay_path(root / "replays", game_id)
        replay_file.parent.mkdir(parents=True, exist_ok=True)
        record.save(replay_file)
    seats = tuple(
        SeatRecord(seat, bot, place, 0,
                   "crash" if forfeit is not None and forfeit[0] == seat else None,
                   forfeit[1] if forfeit is not None and forfeit[0] == seat else None)
        for seat, (bot, place) in enumerate(zip(table, places, strict=True)))
    with ResultStore(db) as results:
        name = f"{','.join(table)}/deals{deal}-{deal}"
        if name not in {m.name for m in results.meetings()}:
            results.add_meeting(Meeting(name, table, deal, 1))
        results.record(GameRecord(game_id, f"{','.join(table)}/deal{deal}", deal, 10,
                                  "win", seats, None if replay_file is None
                                  else str(replay_file)))
    for bot, text in (log or {}).items():
        unit = f"{','.join(table)}/deals{deal}-{deal}/rot{rotation}"
        path = root / "logs" / f"{safe_filename(unit)}-{safe_filename(bot)}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return game_id


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


async def sign_in(client: httpx.AsyncClient, token: str) -> httpx.Response:
    form = await client.get("/signin")
    return await client.post("/signin", data={"csrf": csrf_of(form.text), "token": token})


class Browsers:
    """One application of a served competition, and browsers of it (each a client with
    cookies of its own)."""

    def __init__(self, served: Served) -> None:
        self.app = build_app(served.state)
        self.clients: list[httpx.AsyncClient] = []

    def new(self, base_url: str = "http://competition.test") -> httpx.AsyncClient:
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app),
                                   base_url=base_url)
        self.clients.append(client)
        return client

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()


def stored_games(db: Path) -> int:
    with ResultStore(db, readonly=True) as results:
        return results.game_count()
