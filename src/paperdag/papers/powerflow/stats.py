"""Across-seed summaries: the mean and its Student-t confidence interval mean +- t_{(1+c)/2, n-1} s / sqrt(n)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Interval:
    """A mean over seeds and its two-sided confidence interval [lo, hi]."""

    mean: float
    lo: float
    hi: float

    def rounded(self, digits: int = 4) -> dict[str, float | list[float]]:
        return {"mean": round(self.mean, digits), "ci": [round(self.lo, digits), round(self.hi, digits)]}


def mean_ci(values: np.ndarray, confidence: float) -> Interval:
    """Mean of ``values`` (one per seed) with the t-interval at level ``confidence``."""
    v = np.asarray(values, dtype=float)
    half = stats.t.ppf((1 + confidence) / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return Interval(float(v.mean()), float(v.mean() - half), float(v.mean() + half))


def spread_by_step(step: np.ndarray, value: np.ndarray) -> dict[str, np.ndarray]:
    """Per distinct step: mean, min and max of ``value`` over the runs (seeds) logged at it."""
    steps = np.unique(step)
    rows = [value[step == s] for s in steps]
    return {"step": steps, "mean": np.array([r.mean() for r in rows]), "min": np.array([r.min() for r in rows]),
            "max": np.array([r.max() for r in rows])}
