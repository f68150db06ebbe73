"""Across-seed summaries: the mean and its two-sided Student-t confidence interval mean +- t_{level, n-1} s / sqrt(n)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class MeanCI:
    """A mean over seeds and its confidence interval [lo, hi]."""

    mean: float
    lo: float
    hi: float


def mean_ci(values: np.ndarray, level: float = 0.95) -> MeanCI:
    """mean +- t_{(1 + level) / 2, n - 1} * sd / sqrt(n) of n >= 2 values (sd with n - 1 in the denominator)."""
    v = np.asarray(values, float)
    if len(v) < 2:
        raise ValueError("a confidence interval needs at least two seeds")
    half = stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return MeanCI(float(v.mean()), float(v.mean() - half), float(v.mean() + half))


def summarize(rows: list[dict], keys: tuple[str, ...], values: tuple[str, ...]) -> dict[tuple, dict[str, MeanCI]]:
    """Group ``rows`` by the ``keys`` columns and give each ``values`` column's mean_ci over the group (the seeds)."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    return {g: {v: mean_ci(np.array([r[v] for r in members])) for v in values} for g, members in groups.items()}
