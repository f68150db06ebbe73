"""Rates of W1(alpha) -> 0 with bootstrap confidence intervals: a log-log slope, and the two-term model.

Usable stepsizes: those whose W1 is at least ``floor_ratio`` times the Monte-Carlo floor (below it the estimate
measures sampling noise, not the steady state). Every fit is refitted on each bootstrap replicate (chains and limit
draws resampled at every stepsize; verify) and its 95% CI is estimate +- 1.96 sd of the refits (the normal bootstrap
interval: stable with the few tens of replicates the budget allows). Every fitted coefficient is a fit interval
(``paperdag.common.stats.Interval``, method ``fit``): its unit is the stepsize (n = the stepsizes fitted), its span
the range of its regressor over them (log alpha for a slope, alpha^(1/2) for c_h and c_1), and its degrees of freedom
those of the bootstrap sd (replicates - 1), through which the rules re-level it.

Log-log slope: least squares log W1(alpha) = c + s log alpha.

Two-term model (the expansion of W1 in powers of alpha^(1/2) to the first two orders):
    W1(alpha) = c_h alpha^(1/2) + c_1 alpha,
weighted least squares with weights 1 / sd_i^2 (sd_i the bootstrap sd of W1 at stepsize i). c_h > 0 is a rate-1/2
term, the leading one for alpha below the crossover alpha_c = (c_h / c_1)^2, where the two terms are equal; with
c_h = 0 the error is O(alpha). The window is declared, not chosen by the fit: every usable stepsize of the sweep, and
no fit with fewer than ``min_points`` of them (>= 5: >= 3 degrees of freedom for the lack-of-fit test). The lack of
fit chi^2 = sum_i (r_i / sd_i)^2 (r_i the residuals, m - 2 degrees of freedom) is reported with its p-value and widens
the coefficients' intervals by the Birge ratio sqrt(max(1, chi^2 / (m - 2))) (the scale factor of the Particle Data
Group's averages): the neglected orders (alpha^(3/2), ...) that bend the largest stepsizes cost precision, never the
window. Whether the alpha^(1/2) term leads at the smallest stepsize a_min of the window (a_min <= alpha_c) is the sign
of the lead c_h - a_min^(1/2) c_1, with its own bootstrap fit interval (``TwoTerm.lead``). The MC floor is not
subtracted: the empirical W1 of two samples is not the true W1 plus the floor (at our smallest Gaussian-quadratic
stepsize the closed-form W1 is 0.00254, the measured 0.00256, the floor 0.00056); stepsizes near it are excluded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from paperdag.common.stats import Interval

Z95 = 1.96
UNIT = "stepsize"


def fit_interval(value: float, reps: np.ndarray, regressor: np.ndarray, scale: float = 1.0) -> Interval:
    """``value`` +- 1.96 sd(reps) x ``scale`` as a fit interval over the stepsizes of ``regressor`` (module
    docstring)."""
    half = Z95 * float(np.std(reps, ddof=1)) * scale
    return Interval(float(value), float(value) - half, float(value) + half, len(regressor), 0.95, UNIT, "fit",
                    df=float(len(reps) - 1), span=float(np.ptp(regressor)))


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of y on x."""
    xc = x - x.mean()
    return float(xc @ (y - y.mean()) / (xc @ xc))


def loglog_rate(alphas: np.ndarray, values: np.ndarray, boots: np.ndarray, floors: np.ndarray,
                floor_ratio: float) -> Interval:
    """Slope of log values on log alphas over the stepsizes with values >= floor_ratio * floors, with its bootstrap
    fit interval; boots is (stepsizes x replicates). Fewer than 3 usable stepsizes give a NaN interval (n = the
    usable stepsizes) that no rule accepts."""
    use = values >= floor_ratio * floors
    if use.sum() < 3:
        nan = float("nan")
        return Interval(nan, nan, nan, int(use.sum()), 0.95, UNIT, "fit")
    la = np.log(alphas[use])
    reps = np.array([_slope(la, np.log(np.maximum(boots[use, r], 1e-300))) for r in range(boots.shape[1])])
    return fit_interval(_slope(la, np.log(values[use])), reps, la)


@dataclass(frozen=True)
class TwoTerm:
    """W1 = c_h alpha^(1/2) + c_1 alpha fitted on ``alphas`` (the window: every usable stepsize): coefficients with
    their bootstrap fit intervals (widened by the Birge ratio), the lead c_h - a_min^(1/2) c_1 at the window's
    smallest stepsize a_min (its interval the same way), the crossover (c_h / c_1)^2 (inf when c_1 <= 0 < c_h, NaN
    when c_h <= 0), and the lack-of-fit chi^2 with its p-value (m - 2 dof)."""

    c_half: Interval
    c_one: Interval
    lead: Interval
    crossover: float
    alphas: tuple[float, ...]
    chi2: float
    p_value: float

    @property
    def points(self) -> int:
        return len(self.alphas)

    @property
    def birge(self) -> float:
        """sqrt(max(1, chi^2 / (m - 2))): the factor lack of fit widened the intervals by (1 with no dof left)."""
        return birge_ratio(self.chi2, self.points)

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return self.c_half.mean * np.sqrt(alpha) + self.c_one.mean * alpha


def _wls(alphas: np.ndarray, values: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, float]:
    """(c_h, c_1) by weighted least squares of values (stepsizes, or stepsizes x replicates) on (alpha^(1/2), alpha)
    with weights 1 / sd^2, and the chi^2 of the first column."""
    X = np.column_stack([np.sqrt(alphas), alphas]) / sd[:, None]
    Y = (values.reshape(len(alphas), -1)) / sd[:, None]
    coef = np.linalg.lstsq(X, Y, rcond=None)[0]
    return coef, float(((X @ coef[:, 0] - Y[:, 0]) ** 2).sum())


def birge_ratio(chi2_value: float, points: int) -> float:
    """sqrt(max(1, chi^2 / dof)) on dof = points - 2 (1 when no degree of freedom is left)."""
    return math.sqrt(max(1.0, chi2_value / (points - 2))) if points > 2 else 1.0


def crossover(c_half: float, c_one: float) -> float:
    """alpha_c = (c_h / c_1)^2, below which c_h alpha^(1/2) exceeds c_1 alpha: inf when c_1 <= 0 < c_h (the
    alpha^(1/2) term leads everywhere), NaN when c_h <= 0 (it never does)."""
    if c_half <= 0:
        return math.nan
    return (c_half / c_one) ** 2 if c_one > 0 else math.inf


def two_term(alphas: np.ndarray, values: np.ndarray, boots: np.ndarray, floors: np.ndarray, floor_ratio: float,
             min_points: int) -> TwoTerm | None:
    """The two-term fit on every usable stepsize (alphas decreasing; module docstring); None with fewer than
    ``min_points`` of them."""
    i = np.flatnonzero(values >= floor_ratio * floors)
    if len(i) < min_points:
        return None
    m = len(i)
    sd = np.std(boots, axis=1, ddof=1)
    coef, stat = _wls(alphas[i], values[i], sd[i])
    p = float(chi2.sf(stat, m - 2)) if m > 2 else 1.0
    reps = _wls(alphas[i], boots[i], sd[i])[0]
    scale, root = birge_ratio(stat, m), np.sqrt(alphas[i])
    c_h, c_1 = (fit_interval(coef[j, 0], reps[j], root, scale) for j in (0, 1))
    smallest = math.sqrt(float(alphas[i].min()))
    lead = fit_interval(coef[0, 0] - smallest * coef[1, 0], reps[0] - smallest * reps[1], root, scale)
    return TwoTerm(c_h, c_1, lead, crossover(c_h.mean, c_1.mean), tuple(float(a) for a in alphas[i]), stat, p)
