"""Strict JSON for the tests that read the referee's ``--json`` output: ``Infinity``,
``-Infinity`` and ``NaN`` are not JSON, and a CI script's parser refuses them."""

from __future__ import annotations

import json
from typing import Any


def refuse(constant: str) -> Any:
    """A ``parse_constant`` for :func:`json.loads` that fails on any of them."""
    raise ValueError(f"not JSON: {constant}")


def strict_json(text: str | bytes) -> Any:
    """Parse ``text`` as strict JSON: ``Infinity``, ``-Infinity`` and ``NaN`` fail."""
    return json.loads(text, parse_constant=refuse)
