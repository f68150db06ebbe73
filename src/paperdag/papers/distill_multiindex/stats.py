"""The log-log scaling fit of memory-to-target (means over seeds use paperdag.common.stats.mean_ci)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from paperdag.common.stats import Interval


@dataclass(frozen=True)
class PowerFit:
    """log y = c + s log x by least squares: exponent s with its CI (n = the points fitted), intercept c and R^2."""

    slope: Interval
    intercept: float
    r2: float


def power_fit(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> PowerFit:
    """Least-squares fit of log y on log x (scipy.stats.linregress), CI s +- t_{level, n-2} se(s)."""
    fit = stats.linregress(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)))
    half = stats.t.ppf(0.5 + level / 2, len(x) - 2) * fit.stderr
    return PowerFit(Interval(fit.slope, fit.slope - half, fit.slope + half, len(x), level), fit.intercept,
                    fit.rvalue**2)
