"""Means with t confidence intervals over seeds, and the log-log scaling fit of memory-to-target."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Interval:
    """An estimate with its two-sided confidence interval [lo, hi]."""

    estimate: float
    lo: float
    hi: float

    def rounded(self, digits: int = 4) -> dict[str, float | list[float]]:
        return {"estimate": round(self.estimate, digits), "ci95": [round(self.lo, digits), round(self.hi, digits)]}


def mean_ci(values: np.ndarray, level: float = 0.95) -> Interval:
    """mean +- t_{level, n-1} s / sqrt(n) over the n values (seeds)."""
    v = np.asarray(values, float)
    half = stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return Interval(float(v.mean()), float(v.mean() - half), float(v.mean() + half))


@dataclass(frozen=True)
class PowerFit:
    """log y = c + s log x by least squares: exponent s with its CI, intercept c and R^2."""

    slope: Interval
    intercept: float
    r2: float


def power_fit(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> PowerFit:
    """Least-squares fit of log y on log x (scipy.stats.linregress), CI s +- t_{level, n-2} se(s)."""
    fit = stats.linregress(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)))
    half = stats.t.ppf(0.5 + level / 2, len(x) - 2) * fit.stderr
    return PowerFit(Interval(fit.slope, fit.slope - half, fit.slope + half), fit.intercept, fit.rvalue**2)
