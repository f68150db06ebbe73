"""Learning curves, area under them, and confidence intervals over seeds.

Curve of one seed on a grid of B equal step bins over the budget T: c_b = mean return of the training episodes
that end in bin b (an empty bin repeats the previous value; before the first episode ends, the best trivial
policy's return). Normalised score: (x - R_trivial) / (R_optimal - R_trivial), with R_trivial the best of the
uniform random and the constant-action policies (envs.trivial_return): 0 for a policy that ignores the state, 1 for
optimal.
AULC = (1 / B) sum_b normalised(c_b). Confidence intervals are Student t intervals over seeds; comparisons are
paired (every agent meets the same environment seeds), so the interval is that of the per-seed differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


def binned_curve(end_step: np.ndarray, returns: np.ndarray, steps: int, bins: int, start: float) -> np.ndarray:
    """c_b for b = 0..B-1 from one seed's episodes (end steps in 1..T, in order)."""
    which = np.minimum((np.asarray(end_step) - 1) * bins // steps, bins - 1)
    curve, last = np.empty(bins), start
    for b in range(bins):
        sel = which == b
        if sel.any():
            last = float(np.mean(np.asarray(returns)[sel]))
        curve[b] = last
    return curve


def normalise(x: np.ndarray | float, trivial: float, optimal: float) -> np.ndarray:
    """(x - R_trivial) / (R_optimal - R_trivial)."""
    return (np.asarray(x, dtype=float) - trivial) / (optimal - trivial)


@dataclass(frozen=True)
class Interval:
    """A mean over seeds with its two-sided t confidence interval."""

    mean: float
    lo: float
    hi: float

    def as_dict(self, digits: int = 4) -> dict[str, float | list[float]]:
        return {"mean": round(self.mean, digits), "ci": [round(self.lo, digits), round(self.hi, digits)]}


def t_interval(x: np.ndarray, confidence: float) -> Interval:
    """mean(x) +- t_{(1 + confidence) / 2, n - 1} sd(x) / sqrt(n) (zero width when all x are equal)."""
    x = np.asarray(x, dtype=float)
    half = stats.t.ppf((1 + confidence) / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return Interval(float(x.mean()), float(x.mean() - half), float(x.mean() + half))


def paired_interval(a: np.ndarray, b: np.ndarray, confidence: float) -> Interval:
    """t interval of the mean per-seed difference a_i - b_i."""
    return t_interval(np.asarray(a, dtype=float) - np.asarray(b, dtype=float), confidence)
