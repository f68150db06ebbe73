"""Learning curves and the area under them.

Curve of one seed on a grid of B equal step bins over the budget T: c_b = mean return of the training episodes
that end in bin b (an empty bin repeats the previous value; before the first episode ends, the best trivial
policy's return). Normalised score: (x - R_trivial) / (R_optimal - R_trivial), with R_trivial the best of the
uniform random and the constant-action policies (envs.trivial_return): 0 for a policy that ignores the state, 1 for
optimal.
AULC = (1 / B) sum_b normalised(c_b). Intervals over seeds are the shared Student t intervals
(``paperdag.common.stats``); comparisons are paired (every agent meets the same environment seeds).
"""

from __future__ import annotations

import numpy as np


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

