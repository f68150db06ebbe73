"""Least-squares fits with their own t intervals: log-log scaling exponents and proportionality slopes.

Each coefficient is a fit interval (``paperdag.common.stats.Interval``, method ``fit``): the estimate, its t interval
on n - p degrees of freedom, the number n of observations (of ``unit``: a cell of the grid, a removal group) and the
``span`` of its regressor (max - min, in the units the fit sees: log x for a log-log fit), which is what a fit's
precision depends on besides n. The shared decision rules (paperdag.common.verdicts) judge it and, when it straddles
a boundary, say how much wider a regressor range would resolve it.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from paperdag.common.stats import Interval


def ols(y: np.ndarray, columns: dict[str, np.ndarray], intercept: bool = True, level: float = 0.95,
        unit: str = "") -> dict[str, Interval]:
    """Ordinary least squares y = b0 + sum_j b_j x_j + e, with b_j +- t_{level, n-p} * se_j.

    se_j = sqrt(s^2 [(A^T A)^-1]_jj), s^2 = ||y - A b||^2 / (n - p), A the design matrix with p columns; the span of
    b_j is max(x_j) - min(x_j) (0 for the intercept).
    """
    names = (["intercept"] if intercept else []) + list(columns)
    cols = ([np.ones(len(y))] if intercept else []) + [np.asarray(c, float) for c in columns.values()]
    A = np.column_stack(cols)
    n, p = A.shape
    if n <= p:
        raise ValueError(f"{n} observations cannot fit {p} coefficients with an error estimate")
    b, *_ = np.linalg.lstsq(A, y, rcond=None)
    s2 = float(np.sum((y - A @ b) ** 2)) / (n - p)
    se = np.sqrt(s2 * np.diag(np.linalg.inv(A.T @ A)))
    t = stats.t.ppf(0.5 + level / 2, n - p)
    return {
        name: Interval(float(b[j]), float(b[j] - t * se[j]), float(b[j] + t * se[j]), n, level, unit, "fit",
                       df=float(n - p), span=float(np.ptp(cols[j])))
        for j, name in enumerate(names)
    }


def loglog(y: np.ndarray, level: float = 0.95, unit: str = "", **regressors: np.ndarray) -> dict[str, Interval]:
    """Scaling exponents: fit log y = c + sum_j a_j log x_j, so y ~ prod_j x_j^a_j (all values must be > 0)."""
    values = [np.asarray(y, float), *map(np.asarray, regressors.values())]
    if any(np.any(v <= 0) for v in values):
        raise ValueError("log-log fit needs positive values")
    return ols(np.log(y), {k: np.log(v) for k, v in regressors.items()}, level=level, unit=unit)


def proportional(actual: np.ndarray, predicted: np.ndarray, level: float = 0.95, unit: str = "") -> Interval:
    """Slope b of predicted = b * actual + e (least squares through the origin): 1 = unbiased, < 1 = underestimate."""
    return ols(np.asarray(predicted, float), {"slope": actual}, intercept=False, level=level, unit=unit)["slope"]


def contains(c: Interval, value: float) -> bool:
    """value in [lo, hi]."""
    return c.lo <= value <= c.hi
