"""Log-log scaling fits of memory-to-target: on one variable (power_fit) and on several at once (loglinear_fit).
Means over seeds use paperdag.common.stats.mean_ci.

Every exponent is a fit interval (``paperdag.common.stats.Interval``, method ``fit``): its unit is what one fitted
point is (``run``: one (d, r, L) cell at one seed), n the points, its degrees of freedom n - p and its ``span`` the
range of its log regressor over them (what a fit's precision depends on besides n)."""

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


def power_fit(x: np.ndarray, y: np.ndarray, level: float = 0.95, unit: str = "run") -> PowerFit:
    """Least-squares fit of log y on log x (scipy.stats.linregress), CI s +- t_{level, n-2} se(s)."""
    lx = np.log(np.asarray(x, float))
    fit = stats.linregress(lx, np.log(np.asarray(y, float)))
    half = stats.t.ppf(0.5 + level / 2, len(x) - 2) * fit.stderr
    return PowerFit(Interval(fit.slope, fit.slope - half, fit.slope + half, len(x), level, unit, "fit",
                             df=float(len(x) - 2), span=float(np.ptp(lx))), fit.intercept, fit.rvalue**2)


@dataclass(frozen=True)
class LogLinearFit:
    """log y = c + sum_k b_k log x_k by least squares: each exponent b_k with its CI (n = the points fitted), R^2."""

    exponents: dict[str, Interval]
    r2: float


def loglinear_fit(y: np.ndarray, regressors: dict[str, np.ndarray], level: float = 0.95,
                  unit: str = "run") -> LogLinearFit:
    """Ordinary least squares of log y on an intercept and the log x_k that take more than one value (a constant
    x_k has no exponent: nan). CI b_k +- t_{level, n-p} sqrt(s^2 [(Z^T Z)^-1]_kk) with s^2 = RSS / (n - p), p the
    number of columns of the design Z = [1, log x_k ...]; with one regressor this is ``power_fit``'s interval."""
    ly = np.log(np.asarray(y, float))
    names = [k for k, x in regressors.items() if len(np.unique(x)) > 1]
    Z = np.column_stack([np.ones_like(ly), *(np.log(np.asarray(regressors[k], float)) for k in names)])
    n, cols = Z.shape
    nan = Interval(float("nan"), float("nan"), float("nan"), n, level, unit, "fit")
    if n <= cols:
        return LogLinearFit({k: nan for k in regressors}, float("nan"))
    beta, *_ = np.linalg.lstsq(Z, ly, rcond=None)
    resid = ly - Z @ beta
    s2 = float(resid @ resid) / (n - cols)
    se = np.sqrt(s2 * np.diag(np.linalg.inv(Z.T @ Z)))
    half = stats.t.ppf(0.5 + level / 2, n - cols) * se
    fitted = {k: Interval(float(beta[i]), float(beta[i] - half[i]), float(beta[i] + half[i]), n, level, unit, "fit",
                          df=float(n - cols), span=float(np.ptp(Z[:, i]))) for i, k in enumerate(names, start=1)}
    r2 = 1.0 - float(resid @ resid) / float(((ly - ly.mean()) ** 2).sum())
    return LogLinearFit({k: fitted.get(k, nan) for k in regressors}, r2)


@dataclass(frozen=True)
class ScalingFits:
    """The memory laws' fits on an M* table (rows with d, r, width, m1 = M1*, m2 = M2*; only runs that reached):
    ``composite``: memory* = (M1* + M2*)(d + 1) on r^2 d + L (None under 3 runs); ``bookkeeping``: the exponent the
    same fit gives to d + 1 alone (memory if M1* + M2* were constant); ``phase1_r``: the exponent of M1* (points) on r
    and ``phase2_L`` of M2* (d + 1) (numbers) on L, each from a log-linear fit on log r, log d, log L (the other
    factors held fixed); ``decades_L``: log10 of the fitted runs' range of L."""

    composite: PowerFit | None
    bookkeeping: float | None
    phase1_r: Interval
    phase2_L: Interval
    runs: int
    decades_L: float


def scaling_fits(rows: list[dict]) -> ScalingFits:
    """The fits of ``ScalingFits`` on the runs of ``rows`` (every row must have reached: m1 and m2 not None)."""
    d = np.array([r["d"] for r in rows], float)
    r_ = np.array([r["r"] for r in rows], float)
    L = np.array([r["width"] for r in rows], float)
    m1 = np.array([r["m1"] for r in rows], float)
    m2 = np.array([r["m2"] for r in rows], float)
    x = r_**2 * d + L
    ok = len(rows) >= 3 and len(np.unique(x)) > 1
    composite = power_fit(x, (m1 + m2) * (d + 1)) if ok else None
    bookkeeping = power_fit(x, d + 1).slope.mean if ok else None
    factors = {"r": r_, "d": d, "L": L}
    phase1 = loglinear_fit(m1, factors).exponents["r"]
    phase2 = loglinear_fit(m2 * (d + 1), factors).exponents["L"]
    decades = float(np.log10(L.max() / L.min())) if len(rows) else 0.0
    return ScalingFits(composite, bookkeeping, phase1, phase2, len(rows), decades)
