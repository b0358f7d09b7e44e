"""The rules and the time control that the arguments of ``match`` and ``sprt`` give."""

from __future__ import annotations

import argparse
import json
from typing import Any

from referee.config import rule_flag_error
from referee.core import TimeControl, UsageError
from referee.rules import Rules


def time_control(args: argparse.Namespace) -> TimeControl:
    try:
        return TimeControl(
            move_ms=args.move_ms,
            bank_ms=args.bank_ms,
            increment_ms=args.increment_ms,
            reaction_ms=args.reaction_ms,
            startup_ms=args.startup_ms,
            time_basis=args.time_basis,
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad time control: {exc}") from None


def rules(args: argparse.Namespace) -> Rules:
    flags: dict[str, Any] = {}
    for item in args.flag:
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--flag needs NAME=VALUE, got {item!r}")
        try:
            flags[name] = json.loads(value)
        except json.JSONDecodeError:
            raise UsageError(f"--flag {name}: {value!r} is not a JSON value") from None
        problem = rule_flag_error(name, flags[name])
        if problem is not None:
            raise UsageError(f"--flag {name}: {problem}")
    try:
        return Rules.preset(args.rules, **flags)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad rules: {exc}") from None
