"""Least-squares fits with t-based confidence intervals: log-log scaling exponents and proportionality slopes.

A coefficient carries the number of observations of its fit (``n``) and the interval's level (``confidence``), so
the shared decision rules (paperdag.common.verdicts) can judge it and say how many observations would resolve it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Coef:
    """A fitted coefficient with its standard error and two-sided confidence interval [lo, hi] at level
    ``confidence``, from a fit to ``n`` observations."""

    estimate: float
    stderr: float
    lo: float
    hi: float
    n: int
    confidence: float

    def contains(self, value: float) -> bool:
        """value in [lo, hi]."""
        return self.lo <= value <= self.hi


def ols(y: np.ndarray, columns: dict[str, np.ndarray], intercept: bool = True, level: float = 0.95) -> dict[str, Coef]:
    """Ordinary least squares y = b0 + sum_j b_j x_j + e, with b_j +- t_{level, n-p} * se_j.

    se_j = sqrt(s^2 [(A^T A)^-1]_jj), s^2 = ||y - A b||^2 / (n - p), A the design matrix with p columns.
    """
    names = (["intercept"] if intercept else []) + list(columns)
    A = np.column_stack(([np.ones(len(y))] if intercept else []) + [np.asarray(c, float) for c in columns.values()])
    n, p = A.shape
    if n <= p:
        raise ValueError(f"{n} observations cannot fit {p} coefficients with an error estimate")
    b, *_ = np.linalg.lstsq(A, y, rcond=None)
    s2 = float(np.sum((y - A @ b) ** 2)) / (n - p)
    se = np.sqrt(s2 * np.diag(np.linalg.inv(A.T @ A)))
    t = stats.t.ppf(0.5 + level / 2, n - p)
    return {
        name: Coef(float(b[j]), float(se[j]), float(b[j] - t * se[j]), float(b[j] + t * se[j]), n, level)
        for j, name in enumerate(names)
    }


def loglog(y: np.ndarray, level: float = 0.95, **regressors: np.ndarray) -> dict[str, Coef]:
    """Scaling exponents: fit log y = c + sum_j a_j log x_j, so y ~ prod_j x_j^a_j (all values must be > 0)."""
    values = [np.asarray(y, float), *map(np.asarray, regressors.values())]
    if any(np.any(v <= 0) for v in values):
        raise ValueError("log-log fit needs positive values")
    return ols(np.log(y), {k: np.log(v) for k, v in regressors.items()}, level=level)


def proportional(actual: np.ndarray, predicted: np.ndarray, level: float = 0.95) -> Coef:
    """Slope b of predicted = b * actual + e (least squares through the origin): 1 = unbiased, < 1 = underestimate."""
    return ols(np.asarray(predicted, float), {"slope": actual}, intercept=False, level=level)["slope"]
