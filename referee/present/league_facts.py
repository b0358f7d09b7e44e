"""The header of a league report: what was played, under which rules and time control,
and when (read from the results database)."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from referee.rules import PRESETS, Rules


def describe_rules(wire: dict[str, Any] | None) -> str:
    """``super-taki-2018`` and the flags that differ from the preset, in words."""
    if not wire:
        return "not recorded"
    name = str(wire.get("name", "?"))
    if name not in PRESETS:
        return name
    preset = Rules.preset(name).to_wire()
    changed = [f"{key} {_value(value)}" for key, value in wire.items()
               if key not in ("name", "deck") and preset.get(key) != value]
    return name + (f" ({', '.join(changed)})" if changed else "")


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def describe_time(time: dict[str, Any] | None) -> str:
    """The time control in words: ``1000 ms a move, bank 10000 ms + 100 ms, ...``."""
    if not time:
        return "not recorded"
    parts = [f"{time['move_ms']} ms a move"]
    if time.get("bank_ms") is not None:
        parts.append(f"bank {time['bank_ms']} ms + {time.get('increment_ms', 0)} ms a move")
    parts.append(f"{time['reaction_ms']} ms a reaction")
    return ", ".join(parts)


def header_lines(games: int, db: str, rules: str | None, time: str | None,
                 dates: tuple[str, str] | None, voided: int = 0) -> str:
    """The report's subtitle: games (and the games voided every time they were played),
    database, dates, rules and time control (HTML)."""
    when = ""
    if dates is not None:
        first, last = (d.replace("T", " ")[:16] for d in dates)
        when = f", played {first} to {last} UTC"
    void = f", {voided} voided" if voided else ""
    facts = [
        f"{games} game{'s' if games != 1 else ''}{void} from {escape(db)}{when}",
        f"rules: {escape(describe_rules(_json(rules)))}"
        f" &middot; time control: {escape(describe_time(_json(time)))}",
    ]
    return "<br>".join(facts)


def _json(text: str | None) -> Any:
    try:
        return None if text is None else json.loads(text)
    except json.JSONDecodeError:
        return None
