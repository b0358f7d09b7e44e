"""The rule flags a league or competition file (``[rules]``) or ``--flag NAME=VALUE``
may set: their names and types (the rules core checks the ranges)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from referee.config.fields import Fail, build
from referee.rules import Rules

_RULE_FLAGS = {
    "voluntary_draw", "crazy_card", "plus3_rule", "last_card_penalty", "action_limit",
    "pyramid", "hand_size", "scoring",
}
#: The keys of the ``scoring`` flag: what a card left in hand is worth (R22).
_SCORING_KEYS = ("colored_action", "colorless")
_BOOL_FLAGS = {"voluntary_draw", "crazy_card", "plus3_rule", "pyramid"}


def rule_flag_error(name: str, value: object) -> str | None:
    """What is wrong with the rule flag ``name`` = ``value``, or None when it is usable
    (the rules core checks ranges; this checks names and types)."""
    if name not in _RULE_FLAGS:
        return f"unknown rule flag (known: {', '.join(sorted(_RULE_FLAGS))})"
    if name == "scoring":
        return _scoring_error(value)
    if name in _BOOL_FLAGS:
        if not isinstance(value, bool):
            return f"must be true or false, not {value!r}"
    elif not isinstance(value, int) or isinstance(value, bool):
        return f"must be an integer, not {value!r}"
    return None


def _scoring_error(value: object) -> str | None:
    wanted = (f"must be a table of both {' and '.join(_SCORING_KEYS)}, each an integer from 0"
              ' (e.g. {"colored_action": 10, "colorless": 20})')
    if not isinstance(value, dict) or sorted(value) != sorted(_SCORING_KEYS):
        return f"{wanted}, not {value!r}"
    for key, points in value.items():
        if not isinstance(points, int) or isinstance(points, bool) or points < 0:
            return f"{key} must be an integer from 0, not {points!r}"
    return None


def read_rules(preset: str, flags: Mapping[str, Any], fail: Fail) -> Rules:
    """The rules of the preset ``preset`` with a ``[rules]`` table's ``flags``; a flag's
    problem is reported at its key."""
    for key, value in flags.items():
        problem = rule_flag_error(key, value)
        if problem is not None:
            raise fail(key, problem)
    return build(functools.partial(Rules.preset, preset), flags, fail)
