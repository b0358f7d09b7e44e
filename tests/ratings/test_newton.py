"""Tests for referee.ratings.newton: the Cholesky solve and the damped Newton ascent."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from referee.ratings.newton import cholesky_solve, maximize


def test_cholesky_solves_positive_definite_systems_only() -> None:
    a = [[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]]
    x = cholesky_solve(a, [1.0, 2.0, 3.0])
    assert x is not None
    for row, b in zip(a, [1.0, 2.0, 3.0], strict=True):
        assert sum(r * v for r, v in zip(row, x, strict=True)) == pytest.approx(b)
    assert cholesky_solve([[1.0, 2.0], [2.0, 1.0]], [1.0, 1.0]) is None  # indefinite
    assert cholesky_solve([[1.0, 1.0], [1.0, 1.0]], [1.0, 1.0]) is None  # singular


def test_maximize_finds_the_top_of_a_concave_function_on_the_free_coordinates() -> None:
    # -sum(exp(t_i - c_i) - t_i): concave, far from quadratic, maximum at t = c; the
    # pinned last coordinate keeps its value.
    centre = [3.0, -2.0, 0.5]

    def objective(t: Sequence[float]) -> float:
        return -sum(math.exp(x - c) - x for x, c in zip(t[:2], centre, strict=False))

    def derivatives(t: Sequence[float]) -> tuple[list[float], list[list[float]]]:
        grad = [1.0 - math.exp(t[0] - centre[0]), 1.0 - math.exp(t[1] - centre[1]), 0.0]
        hess = [[math.exp(t[0] - centre[0]), 0.0, 0.0],
                [0.0, math.exp(t[1] - centre[1]), 0.0], [0.0, 0.0, 0.0]]
        return grad, hess

    theta = maximize([-3.0, 4.0, 7.0], [0, 1], objective, derivatives)
    assert theta == pytest.approx([3.0, -2.0, 7.0], abs=1e-9)
    assert maximize([1.0], [], objective, derivatives) == [1.0]
