"""Across-seed summaries that every paper's claims use.

A claim over seeds compares means with their Student-t confidence intervals,
mean +- t_{(1+c)/2, n-1} s / sqrt(n), where s is the sample standard deviation (ddof = 1) of the n per-seed values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Interval:
    """A mean (or any estimate) and its two-sided confidence interval [lo, hi] at level ``confidence``, from ``n``
    values (0 when the interval does not come from n independent values, e.g. a closed form)."""

    mean: float
    lo: float
    hi: float
    n: int = 0
    confidence: float = 0.95

    def excludes_zero(self) -> bool:
        """True when the whole interval lies on one side of 0 (the effect's sign is resolved)."""
        return self.lo > 0 or self.hi < 0

    def rounded(self, digits: int = 4) -> dict[str, float | list[float]]:
        """``{"mean": m, "ci": [lo, hi]}`` rounded for metrics files."""
        return {"mean": round(self.mean, digits), "ci": [round(self.lo, digits), round(self.hi, digits)]}


def mean_ci(values: np.ndarray | list[float], confidence: float = 0.95) -> Interval:
    """Mean of ``values`` (one per seed) with the t-interval at level ``confidence``; a single value has a 0-wide CI."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        raise ValueError("mean_ci needs at least one value")
    if v.size == 1:
        return Interval(float(v[0]), float(v[0]), float(v[0]), 1, confidence)
    from scipy import stats  # here, not at import: the claim model imports this module and stays light

    half = stats.t.ppf((1 + confidence) / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    return Interval(float(v.mean()), float(v.mean() - half), float(v.mean() + half), int(v.size), confidence)


def paired_diff_ci(a: np.ndarray | list[float], b: np.ndarray | list[float], confidence: float = 0.95) -> Interval:
    """The t-interval of the per-seed differences a_i - b_i (methods run on the same seeds)."""
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"paired_diff_ci needs one value per seed in both arms, got {a.size} and {b.size}")
    return mean_ci(a - b, confidence)
