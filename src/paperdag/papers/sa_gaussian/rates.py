"""Log-log rates with bootstrap confidence intervals, and the alpha^(1/2) log(1/alpha) envelope check.

Rate: least squares log W1(alpha) = c + s log alpha over the stepsizes whose W1 is at least ``floor_ratio`` times
the Monte-Carlo floor (below it the estimate measures sampling noise, not the steady state); s is refitted on each
bootstrap replicate (chains and limit draws resampled at every stepsize) and the 95% CI is s +- 1.96 sd of the
refits (the normal bootstrap interval: stable with the few tens of replicates the budget allows).
Envelope (the paper's bound shape): E(alpha) = C alpha^(1/2) log(1/alpha), with C fitted on the largest stepsize,
C = W1(alpha_max) / (alpha_max^(1/2) log(1/alpha_max)); a stepsize passes when W1(alpha) <= E(alpha) + floor(alpha).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Rate:
    """Fitted slope, its bootstrap 95% CI and the number of stepsizes used."""

    estimate: float
    lo: float
    hi: float
    points: int

    def within(self, value: float, tol: float) -> bool:
        """The CI meets [value - tol, value + tol]."""
        return self.points >= 3 and self.lo <= value + tol and self.hi >= value - tol


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of y on x."""
    xc = x - x.mean()
    return float(xc @ (y - y.mean()) / (xc @ xc))


def loglog_rate(alphas: np.ndarray, values: np.ndarray, boots: np.ndarray, floors: np.ndarray,
                floor_ratio: float) -> Rate:
    """Slope of log values on log alphas over the stepsizes with values >= floor_ratio * floors; boots is
    (stepsizes x replicates). Fewer than 3 usable stepsizes give a NaN rate that no claim accepts."""
    use = values >= floor_ratio * floors
    if use.sum() < 3:
        return Rate(float("nan"), float("nan"), float("nan"), int(use.sum()))
    la = np.log(alphas[use])
    reps = [_slope(la, np.log(np.maximum(boots[use, r], 1e-300))) for r in range(boots.shape[1])]
    est, sd = _slope(la, np.log(values[use])), float(np.std(reps, ddof=1))
    return Rate(est, est - 1.96 * sd, est + 1.96 * sd, int(use.sum()))


def envelope(alphas: np.ndarray, values: np.ndarray) -> np.ndarray:
    """E(alpha) = C alpha^(1/2) log(1/alpha) with C = values[0] / (alphas[0]^(1/2) log(1/alphas[0]))
    (alphas decreasing, all < 1)."""
    shape = np.sqrt(alphas) * np.log(1.0 / alphas)
    return values[0] / shape[0] * shape


def within_envelope(alphas: np.ndarray, values: np.ndarray, floors: np.ndarray) -> np.ndarray:
    """Per stepsize: W1(alpha) <= E(alpha) + floor(alpha)."""
    return values <= envelope(alphas, values) + floors
