"""The continuous ladder with real bots: meetings played whole, bots entering, leaving
and pausing, the live ratings, and kill -9 at any moment."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
import trio
from jsonout import strict_json
from processes import league_deal, pids_with_a_deal_twice

from referee.competition import ladder as ladder_module
from referee.competition.ladder import LadderSettings, full_ratings, run_ladder
from referee.competition.ladder_control import (
    GameLanded,
    LadderControl,
    LadderEvent,
    RatingsChanged,
)
from referee.core.specs import BotCommand, BotSpec
from referee.league.store import Meeting, ResultStore, StoreError
from referee.ratings.models import MULTIPLAYER_MODEL

REPO = Path(__file__).resolve().parents[2]
REFEREE = Path(sys.executable).with_name("taki-referee")
RUNNER = Path(__file__).resolve().parent / "ladder_run.py"


def bot(name: str, kind: str = "random", seed: int = 1) -> BotSpec:
    script = REPO / "sample_bots" / f"{kind}_bot.py"
    args = [str(seed)] if kind == "random" else []
    return BotSpec(name, BotCommand([sys.executable, str(script), *args]))


def settings(**changes: object) -> LadderSettings:
    base: dict[str, object] = {"table_sizes": (2,), "deals": 1, "concurrency": 2,
                               "placement_games": 2, "seed": 3}
    base.update(changes)
    return LadderSettings(**base)  # type: ignore[arg-type]


def meeting_games(meeting: Meeting) -> set[str]:
    table = ",".join(meeting.bots)
    return {f"{table}/deal{d}/rot{r}" for d in range(meeting.first_deal,
                                                     meeting.first_deal + meeting.deals)
            for r in range(len(meeting.bots))}


def check_meetings(store: ResultStore) -> list[Meeting]:
    """Every stored game belongs to one meeting; a finished meeting holds all its
    games; the meetings not finished, returned."""
    ids = store.finished_ids()
    owned: Counter[str] = Counter()
    open_ones = []
    for meeting in store.meetings():
        games = meeting_games(meeting)
        owned.update(games & ids)
        if meeting.finished:
            assert games <= ids, meeting
        else:
            open_ones.append(meeting)
    assert set(owned) == ids and set(owned.values()) <= {1}
    return open_ones


async def run_until(store: ResultStore, control: LadderControl, ladder: LadderSettings,
                    done: Callable[[list[GameLanded]], bool],
                    events: list[LadderEvent] | None = None,
                    step: Callable[[list[GameLanded]], None] | None = None) -> list[GameLanded]:
    landed: list[GameLanded] = []

    def hear(event: LadderEvent) -> None:
        if events is not None:
            events.append(event)
        if isinstance(event, GameLanded):
            landed.append(event)
            if step is not None:
                step(landed)
            if done(landed):
                control.stop()

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            await nursery.start(run_ladder, store, ladder, control, hear)
    return landed


@pytest.mark.slow
async def test_a_ladder_plays_whole_meetings_and_rates_them(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    control = LadderControl([bot("greedy@1", "greedy"), bot("random@1", seed=1),
                             bot("random@2", seed=2)])
    events: list[LadderEvent] = []
    with ResultStore(db) as store:
        landed = await run_until(store, control, settings(table_sizes=(2, 3)),
                                 lambda landed: len(landed) >= 15, events)
        assert len(landed) >= 15 and len({e.game_id for e in landed}) == len(landed)
        assert [e.stored for e in landed] == list(range(1, len(landed) + 1))
        open_ones = check_meetings(store)
        assert len(open_ones) <= 2  # the units not started when it stopped
        sizes = Counter(len(m.bots) for m in store.meetings())
        assert sizes[2] >= 2 and sizes[3] >= 2  # the sizes took turns
        report = await full_ratings(store, resamples=20)
    assert report is not None and set(report.names) == {"greedy@1", "random@1", "random@2"}
    assert report.model == MULTIPLAYER_MODEL
    live = control.ratings()
    assert {r.bot for r in live} == {"greedy@1", "random@1", "random@2"}
    assert all(r.low < r.elo < r.high and r.active for r in live)
    assert sum(r.games for r in live) == sum(len(e.seats) for e in landed)
    assert isinstance(events[-1], RatingsChanged) and events[-1].ratings == live
    shown = strict_json(subprocess.run([str(REFEREE), "ratings", str(db), "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    assert shown["games"] == len(landed)


@pytest.mark.slow
@pytest.mark.parametrize("in_loop_field", [200, pytest.param(0, marks=pytest.mark.slow)],
                         ids=["matched-in-loop", "matched-in-a-thread"])
async def test_a_new_bot_is_placed_first_and_a_left_bot_retires(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_loop_field: int) -> None:
    # A big field is matched in a worker thread (0: every field here): the same choices.
    monkeypatch.setattr(ladder_module, "_IN_LOOP_FIELD", in_loop_field)
    db = tmp_path / "ladder.sqlite"
    a, b, c = bot("a@1", seed=1), bot("b@1", seed=2), bot("c@1", "greedy")
    control = LadderControl([a, b])
    first_game_of_c: list[int] = []

    def step(landed: list[GameLanded]) -> None:
        if len(landed) == 4:
            control.set_bots([a, b, c])
        if "c@1" in landed[-1].seats and not first_game_of_c:
            first_game_of_c.append(len(landed))
        if len(landed) == 14:
            control.set_bots([a, c])

    with ResultStore(db) as store:
        await run_until(store, control, settings(placement_games=4),
                        lambda landed: len(landed) >= 24, step=step)
        meetings = store.meetings()
        assert store.retired() == {"b@1"}
    # c@1's placement: every meeting chosen after it came seats it, until it had 4 games.
    joined = next(i for i, m in enumerate(meetings) if "c@1" in m.bots)
    assert all("c@1" in m.bots for m in meetings[joined:joined + 2])
    assert first_game_of_c and first_game_of_c[0] <= 4 + 2 * 2 + 1
    # After b@1 left, no meeting seats it (those chosen before may finish).
    left_at = max(i for i, m in enumerate(meetings) if "b@1" in m.bots)
    assert all(m.bots == ("a@1", "c@1") for m in meetings[left_at + 1:])
    assert len(meetings) - left_at > 2


async def test_a_paused_ladder_starts_nothing_until_it_resumes(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    control = LadderControl([bot("a@1", seed=1), bot("b@1", seed=2)], paused=True)
    landed: list[GameLanded] = []

    def hear(event: LadderEvent) -> None:
        if isinstance(event, GameLanded):
            landed.append(event)
            if len(landed) >= 4:
                control.stop()

    with ResultStore(db) as store:
        with trio.fail_after(120):
            async with trio.open_nursery() as nursery:
                await nursery.start(run_ladder, store, settings(), control, hear)
                await trio.sleep(1.0)
                assert landed == [] and store.meetings() == []
                assert control.paused
                control.resume()
        assert len(landed) >= 4


async def test_fewer_bots_than_a_table_wait_for_more(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    control = LadderControl([bot("a@1")])
    with ResultStore(db) as store:
        with trio.fail_after(120):
            async with trio.open_nursery() as nursery:
                await nursery.start(run_ladder, store, settings(), control)
                await trio.sleep(0.5)
                assert store.meetings() == []
                control.stop()
        assert store.game_count() == 0


def test_bad_settings_and_bots_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"table sizes must be between 2 and 10"):
        settings(table_sizes=(1,)).check()
    with pytest.raises(ValueError, match="not both"):
        settings(workers=2, dask="127.0.0.1:8786").check()
    with pytest.raises(ValueError, match="deals must be at least 1"):
        settings(deals=0).check()
    with pytest.raises(ValueError, match="remote"):
        LadderControl([BotSpec("r@1", None)])
    with pytest.raises(ValueError, match="given twice"):
        LadderControl([bot("a@1"), bot("a@1")])


async def test_a_ladder_and_a_league_never_share_a_database(tmp_path: Path) -> None:
    from referee.config.settings import LeagueConfig
    from referee.league.runner import run_league

    db = tmp_path / "ladder.sqlite"
    control = LadderControl([bot("a@1", seed=1), bot("b@1", seed=2)])
    with ResultStore(db) as store:
        await run_until(store, control, settings(), lambda landed: len(landed) >= 2)
    config = LeagueConfig(path=tmp_path / "x.toml", bots=control.bots, deals=1)
    with ResultStore(db) as store, pytest.raises(StoreError, match="holds a ladder"):
        await run_league(config, store)
    with ResultStore(db) as store, pytest.raises(StoreError, match="another seed"):
        await run_ladder(store, settings(seed=4), control)


# -------------------------------------------------------------------- kill -9


def marked(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if (proc.status() != psutil.STATUS_ZOMBIE
                    and proc.environ().get("TAKI_TEST_MARKER") == marker):
                found.append(proc)
    return found


def stored_ids(db: Path) -> list[str]:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return [row[0] for row in con.execute("SELECT game_id FROM games")]
    except sqlite3.Error:
        return []


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [1, 6])
def test_kill_9_at_any_moment_loses_and_doubles_nothing(tmp_path: Path, kill_after: int
                                                         ) -> None:
    db, log = tmp_path / "ladder.sqlite", tmp_path / "pids.log"
    marker = uuid.uuid4().hex
    args = [sys.executable, str(RUNNER), str(db), "1000", str(log), marker]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    with first:
        deadline = time.monotonic() + 60
        while len(stored_ids(db)) < kill_after:
            assert first.poll() is None, first.stderr.read() if first.stderr else b""
            assert time.monotonic() < deadline, "the ladder stored no game"
            time.sleep(0.01)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    deadline = time.monotonic() + 10
    while marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked(marker) == []
    before = set(stored_ids(db))
    with ResultStore(db, readonly=True) as store:
        open_before = [m for m in store.meetings() if not m.finished]

    again = subprocess.run([*args[:3], "8", *args[4:]], capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    after = stored_ids(db)
    assert len(after) == len(set(after)) and before <= set(after)
    new = again.stdout.split()
    assert len(new) >= 8 and set(new) == set(after) - before
    with ResultStore(db, readonly=True) as store:
        check_meetings(store)
        finished = {m.name for m in store.meetings() if m.finished}
    # The meetings the kill cut short were played to their end.
    assert {m.name for m in open_before} <= finished
    assert set().union(*(meeting_games(m) for m in open_before)) - before <= set(new)
    assert pids_with_a_deal_twice(log, league_deal) == {}


@pytest.mark.slow
async def test_a_ladder_plays_on_worker_processes_and_takes_new_bots_there(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ladder.sqlite"
    a, b, c = bot("a@1", seed=1), bot("b@1", seed=2), bot("c@1", "greedy")
    control = LadderControl([a, b])

    def step(landed: list[GameLanded]) -> None:
        if len(landed) == 2:
            control.set_bots([a, b, c])

    with ResultStore(db) as store:
        landed = await run_until(store, control, settings(workers=2),
                                 lambda landed: any("c@1" in e.seats for e in landed)
                                 and len(landed) >= 6, step=step)
        check_meetings(store)
    assert any("c@1" in e.seats for e in landed)
