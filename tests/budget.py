"""How many examples a property test tries: ``examples(n)`` is ``n`` under the
profile that ``./tasks test`` runs (Hypothesis's default of 100 per test) and a quarter
of it under ``./tasks quick``'s (``--hypothesis-profile quick``, tests/conftest.py)."""

from __future__ import annotations

from hypothesis import settings

#: The examples per test of Hypothesis's default profile, against which ``n`` is given.
DEFAULT_EXAMPLES = 100


def examples(n: int) -> int:
    """``n`` scaled by the loaded profile (at least 10)."""
    return max(10, n * settings.default.max_examples // DEFAULT_EXAMPLES)
