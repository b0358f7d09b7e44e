"""Damped Newton ascent of a concave log-likelihood, shared by the rating models.

A model supplies its objective and, at a point, its gradient and negated Hessian;
:func:`maximize` solves the Newton system by Cholesky decomposition and backtracks
along the step until the objective rises enough (docs/ratings.md, "The iteration").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

__all__ = ["cholesky_solve", "maximize"]

#: The objective at a point.
Objective = Callable[[Sequence[float]], float]
#: The gradient and the negated Hessian at a point (full size, every coordinate).
Derivatives = Callable[[Sequence[float]], tuple[list[float], list[list[float]]]]


def cholesky_solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Solve a x = b for symmetric positive definite ``a``; ``None`` if it is not."""
    m = len(b)
    low = [[0.0] * m for _ in range(m)]
    for i in range(m):
        row_i = low[i]
        for j in range(i + 1):
            row_j = low[j]
            s = a[i][j] - sum(row_i[k] * row_j[k] for k in range(j))
            if i == j:
                if s <= 0.0:
                    return None
                row_i[i] = math.sqrt(s)
            else:
                row_i[j] = s / row_j[j]
    y = [0.0] * m
    for i in range(m):
        y[i] = (b[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * m
    for i in reversed(range(m)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, m))) / low[i][i]
    return x


def maximize(
    theta: Sequence[float], free: Sequence[int], objective: Objective, derivatives: Derivatives
) -> list[float]:
    """The maximum of a concave ``objective`` over the ``free`` coordinates of ``theta``
    (the others stay fixed), by Newton's method with a backtracking line search.

    A step below 1e-6 is taken whole; the iteration stops when it is below 1e-10, or
    after 200 steps.
    """
    theta = list(theta)
    if not free:
        return theta
    value = objective(theta)
    for _ in range(200):
        grad, hess = derivatives(theta)
        g_free = [grad[i] for i in free]
        step = cholesky_solve([[hess[i][j] for j in free] for i in free], g_free)
        if step is None:  # numerically singular: fall back to gradient ascent
            scale = max(max(hess[i][i] for i in free), 1e-12)
            step = [g / scale for g in g_free]
        biggest = max(abs(s) for s in step)
        if biggest < 1e-6:  # quadratic convergence region: take the full step
            for i, s in zip(free, step, strict=True):
                theta[i] += s
            if biggest < 1e-10:
                return theta
            value = objective(theta)
            continue
        slope = sum(g * s for g, s in zip(g_free, step, strict=True))
        t = 1.0
        while True:
            cand = list(theta)
            for i, s in zip(free, step, strict=True):
                cand[i] += t * s
            cand_value = objective(cand)
            if cand_value >= value + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        theta, value = cand, cand_value
    return theta
