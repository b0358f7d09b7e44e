"""Runs a ladder of sample bots into a database until it stored STOP more games, for
the tests that kill it: ``ladder_run.py DB STOP LOG MARKER``. Prints each stored game's
id as it lands. The bots are deal-memory bots (``tests/hostile_bots/deal_memory.py``)
that log which process played which game into LOG."""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from referee.competition.ladder import LadderSettings, run_ladder
from referee.competition.ladder_control import GameLanded, LadderControl, LadderEvent
from referee.core.specs import BotCommand, BotSpec
from referee.league.store import ResultStore

DEAL_MEMORY = Path(__file__).resolve().parents[1] / "hostile_bots" / "deal_memory.py"


def bots(log: str, marker: str, names: list[str]) -> list[BotSpec]:
    return [BotSpec(name, BotCommand([sys.executable, str(DEAL_MEMORY), log],
                                     env={"TAKI_TEST_MARKER": marker}))
            for name in names]


async def main(db: str, stop: int, log: str, marker: str) -> None:
    control = LadderControl(bots(log, marker, ["a@1", "b@1", "c@1", "d@1"]))
    landed = 0

    def hear(event: LadderEvent) -> None:
        nonlocal landed
        if isinstance(event, GameLanded):
            landed += 1
            print(event.game_id, flush=True)
            if landed >= stop:
                control.stop()

    settings = LadderSettings(table_sizes=(2, 3), deals=2, concurrency=2, placement_games=2,
                              seed=5)
    with ResultStore(db) as store:
        await run_ladder(store, settings, control, hear)


if __name__ == "__main__":
    trio.run(main, sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4])
