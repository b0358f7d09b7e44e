"""``taki-referee replay render``: a replay as one self-contained HTML page.

The page needs no network: its CSS, JavaScript and card pictures are inline. The game
is re-simulated here, in Python, with the pure rules core; the page only shows the
snapshots (one before the first action, then one after every log entry) that
:func:`replay_data` embeds as JSON.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from referee.core import Replay, ReplayError, apply_entry, short_detail, write_atomically
from referee.rules import PHASE_NAMES, GameState, cards, event_for

__all__ = [
    "describe_entry",
    "fill_template",
    "render_html",
    "render_replay",
    "replay_data",
    "replay_steps",
]


def _snapshot(state: GameState, since: int) -> dict[str, Any]:
    """Everything the page shows about ``state``, with the events from ``since`` on."""
    phase = PHASE_NAMES[state.phase]
    return {
        "hands": [[cards.NAMES[c] for c in state.hand(seat)] for seat in range(state.players)],
        "sizes": list(state.sizes),
        "active": list(state.active),
        "leading_card": cards.NAMES[state.lead],
        "top_card": cards.NAMES[state.discard[-1]],
        "color": cards.COLORS[state.color],
        "direction": state.direction,
        "pending": state.pending,
        "open_run": None if state.open_run < 0 else cards.COLORS[state.open_run],
        # The run its player is building right now (phase "run").
        "run": cards.COLORS[state.run_color] if phase == "run" else None,
        "turn": state.turn,
        "phase": phase,
        "to_act": list(state.to_act()),
        "draw_pile": len(state.draw_pile),
        "discard_pile": len(state.discard),
        "stages": None if state.stages is None else list(state.stages),
        "action_count": state.action_count,
        "events": [event_for(e, None) for e in state.events[since:]],
    }


def describe_entry(entry: dict[str, Any], bots: list[str], last_card_mattered: bool = True
                   ) -> str:
    """A log entry in words: ``seat 1 (greedy) plays red:5``. The bot's "last card!" is
    told only where it ``last_card_mattered`` (the action left it one card: R6); bots
    may declare it with every action."""

    def who(seat: int) -> str:
        return f"seat {seat} ({bots[seat]})" if 0 <= seat < len(bots) else f"seat {seat}"

    if "forfeit" in entry:
        detail = f": {short_detail(entry['detail'])}" if entry.get("detail") else ""
        return f"{who(int(entry['forfeit']))} forfeits ({entry['reason']}{detail})"
    action = entry["action"]
    kind = action.get("kind")
    if kind == "play":
        text = f"plays {action['card']}"
        if "color" in action:
            text += f", names {action['color']}"
    elif kind == "play_combo":
        text = f"plays the 3+Plus combo in {action['color']}"
    elif kind == "draw":
        count = action.get("count", 1)
        text = f"draws {count} card{'s' if count != 1 else ''}"
    else:
        text = {
            "end_turn": "ends the turn",
            "close_run": "closes the run",
            "leave_run_open": "leaves the run open",
            "break": "breaks the +3",
            "pass": "does not break",
        }.get(str(kind), str(kind))
    if entry.get("last_card") and last_card_mattered:
        text += ' ("last card!")'
    return f"{who(int(entry['seat']))} {text}"


def replay_steps(replay: Replay) -> list[dict[str, Any]]:
    """Re-simulate the replay: the dealt game, then one snapshot after each log entry.

    Each step holds the hands (card names per seat), hand sizes, leading card, color,
    direction, pending +2 total, open run, turn, phase, draw pile size, the events of
    that step (the referee's full view) and, from the second step on, the log entry
    and its description. Raises :class:`ReplayError` at an entry that does not apply."""
    return _simulate(replay)[0]


def _simulate(replay: Replay) -> tuple[list[dict[str, Any]], GameState]:
    state = replay.new_game()
    steps = [{**_snapshot(state, 0), "entry": None, "label": "the deal"}]
    for index, entry in enumerate(replay.log):
        since = len(state.events)
        apply_entry(state, index, entry)
        seat = entry.get("seat")
        # R6: the declaration counts when the action leaves its player one card.
        mattered = isinstance(seat, int) and 0 <= seat < state.players \
            and state.sizes[seat] == 1
        try:
            label = describe_entry(entry, replay.bots, mattered)
        except (ValueError, KeyError, TypeError) as exc:
            raise ReplayError(f"log entry {index} cannot be described: {exc}") from None
        steps.append({**_snapshot(state, since), "entry": entry, "label": label,
                      "ms": entry.get("ms")})
    return steps, state


def _ranking(replay: Replay, state: GameState) -> list[dict[str, Any]]:
    result = state.result()
    forfeits = {f.seat: f for f in result.forfeits}
    rows = []
    for seat in result.order():
        forfeit = forfeits.get(seat)
        rows.append({
            "place": result.places[seat],
            "seat": seat,
            "bot": replay.bots[seat],
            "points": result.points[seat],
            "forfeit": None if forfeit is None else forfeit.reason,
            "detail": None if forfeit is None else forfeit.detail or None,
            "short": None if forfeit is None or not forfeit.detail
            else short_detail(forfeit.detail),
        })
    return rows


def replay_data(replay: Replay) -> dict[str, Any]:
    """Everything the page embeds: the game's facts, its steps and the final ranking
    (of the re-simulated game, which is the recorded one whenever the replay verifies)."""
    steps, state = _simulate(replay)
    return {
        "game_id": replay.game_id,
        # 63-bit seeds as strings: a JavaScript number would lose their last digits.
        "seed": str(replay.seed),
        "master_seed": None if replay.master_seed is None else str(replay.master_seed),
        "rules": replay.rules.name,
        "bots": list(replay.bots),
        "players": replay.players,
        "first_seat": replay.first_seat,
        "finished": state.is_over,
        "winner": state.winner,
        "reason": state.end_reason,
        "ranking": _ranking(replay, state),
        "steps": steps,
    }


def _json_for_script(data: Any) -> str:
    """JSON that can sit inside a ``<script>`` element whatever strings it holds."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@functools.cache
def _template(name: str) -> str:
    """The package template ``templates/NAME``, read once per process (a batch of pages
    reads it once: ``benchmarks/render.py``)."""
    template = resources.files("referee.present").joinpath("templates", name)
    return template.read_text(encoding="utf-8")


def fill_template(name: str, **values: str) -> str:
    """The package template ``templates/NAME`` with every ``{{KEY}}`` replaced, in one
    pass (a value that happens to hold ``{{...}}`` stays as it is)."""
    return re.sub(r"\{\{([A-Z]+)\}\}", lambda m: values[m.group(1)], _template(name))


def render_html(replay: Replay) -> str:
    """The replay as one HTML document (no external resource of any kind)."""
    title = html.escape(f"Super Taki replay {replay.game_id}")
    return fill_template("replay.html", TITLE=title, DATA=_json_for_script(replay_data(replay)))


def render_replay(source: Path, target: Path) -> None:
    """Read the replay ``source`` and write its page to ``target``."""
    page = render_html(Replay.load(source))
    write_atomically(target, page, what="page")


def page_targets(files: Sequence[Path], output: Path | None) -> list[Path]:
    """Where the pages of ``files`` go: beside each replay (``game.json`` to
    ``game.html``); into the folder ``output`` when several files are rendered or
    ``output`` is a folder; else to the file ``output``."""
    if output is None:
        return [f.with_suffix(".html") for f in files]
    if len(files) > 1 or output.is_dir() or str(output).endswith(os.sep):
        return [output / f.with_suffix(".html").name for f in files]
    return [output]
