"""Confidence intervals by the type of what is measured, each with its unit: what one of its n values is (a seed,
a held-out target, a task, a prompt).

- ``mean_ci``: independent units, mean +- t_{(1+c)/2, n-1} s / sqrt(n), s the sample standard deviation (ddof 1);
- ``paired_diff_ci``: the same on the per-unit differences a_i - b_i (both arms run on the same units);
- ``cluster_mean_ci``: samples that share a unit (8 samples of each of 8 targets): the mean over all N samples with
  the cluster-robust (CR1) standard error se^2 = G / (G - 1) sum_g (sum_{i in g} (y_i - ybar))^2 / N^2 and G - 1
  degrees of freedom, G the number of clusters (n = G: the clusters are the units);
- ``proportion_ci``: k successes of n trials, exact Clopper-Pearson [B(a/2; k, n-k+1), B(1-a/2; k+1, n-k)] or Wilson;
- ``cluster_proportion_ci``: binary outcomes that share a unit (8 designs of each target), Korn & Graubard (1998):
  Clopper-Pearson at the effective size n* = p(1 - p) / v, v the CR1 variance of p (as ``cluster_mean_ci``), capped at
  N and scaled by (z / t_{G-1})^2, bounded in [0, 1] like the proportion it is (n = G);
- ``bootstrap_ratio_ci``: mean(a) / mean(b) over units, percentile interval of B resamples of the units (paired
  when a and b come from the same units), drawn from a fixed seed;
- ``slope_ci``: an ordinary least-squares slope with its t interval on n - 2 degrees of freedom; ``span`` records the
  regressor's range, what a fit's precision depends on besides n.

Every ``Interval`` can be re-computed at another level (``Interval.at``): the decision rules use this for
multiplicity (Holm) and for sequential plans, so a rule never compares a 95% interval where a wider one is owed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

T_METHODS = ("t", "paired t", "cluster t", "fit", "given")  # symmetric: re-levelled through the t quantile
PROPORTION_METHODS = ("clopper-pearson", "wilson", "korn-graubard")  # bounded in [0, 1], re-levelled from their counts
METHODS = (*T_METHODS, *PROPORTION_METHODS, "bootstrap")


@dataclass(frozen=True)
class Interval:
    """An estimate (``mean``) and its two-sided confidence interval [lo, hi] at level ``confidence`` from ``n``
    values of ``unit``; ``method`` says how it was made (``METHODS``).

    ``df``: the t degrees of freedom (n - 1 when None); ``successes``: k of a proportion; ``span``: the range of a
    fit's regressor; ``draws``: a bootstrap's replicates (kept in memory for ``at``, never published);
    ``effective_n``: a clustered proportion's n* before its degrees-of-freedom scaling (``cluster_proportion_ci``).
    """

    mean: float
    lo: float
    hi: float
    n: int = 0
    confidence: float = 0.95
    unit: str = ""
    method: str = "t"
    df: float | None = None
    successes: int | None = None
    span: float | None = None
    draws: tuple[float, ...] = field(default=(), repr=False, compare=False)
    effective_n: float | None = None

    def excludes_zero(self) -> bool:
        """True when the whole interval lies on one side of 0 (the effect's sign is resolved)."""
        return self.lo > 0 or self.hi < 0

    def rounded(self, digits: int = 4) -> dict[str, float | list[float]]:
        """``{"mean": m, "ci": [lo, hi]}`` rounded for metrics files."""
        return {"mean": round(self.mean, digits), "ci": [round(self.lo, digits), round(self.hi, digits)]}

    @property
    def dof(self) -> float:
        return float(self.df) if self.df is not None else float(self.n - 1)

    def at(self, confidence: float) -> Interval:
        """The same estimate's interval at level ``confidence``: Clopper-Pearson / Wilson recomputed from k and n,
        a bootstrap's percentiles of its draws, any other interval rescaled by the ratio of its t quantiles
        (exact for t intervals; the shape of a symmetric interval otherwise)."""
        if confidence == self.confidence or not 0 < confidence < 1:
            return self
        if self.method in ("clopper-pearson", "wilson") and self.successes is not None:
            return replace(proportion_ci(self.successes, self.n, confidence, self.method, self.unit), span=self.span)
        if self.method == "korn-graubard" and self.effective_n is not None:
            lo, hi = korn_graubard(self.mean, self.effective_n, self.dof, confidence)
            return replace(self, lo=lo, hi=hi, confidence=confidence)
        if self.method == "bootstrap" and self.draws:
            a = 1 - confidence
            lo, hi = np.quantile(np.asarray(self.draws), [a / 2, 1 - a / 2])
            return replace(self, lo=float(lo), hi=float(hi), confidence=confidence)
        if self.dof < 1 or not all(math.isfinite(v) for v in (self.mean, self.lo, self.hi)):
            return replace(self, confidence=confidence)
        from scipy.special import stdtrit  # t quantiles (stats.t.ppf's ufunc); imported here: this module stays light

        scale = stdtrit(self.dof, (1 + confidence) / 2) / stdtrit(self.dof, (1 + self.confidence) / 2)
        return replace(self, lo=self.mean - (self.mean - self.lo) * scale, hi=self.mean + (self.hi - self.mean) * scale,
                       confidence=confidence)


def _t_interval(mean: float, se: float, df: float, n: int, confidence: float, unit: str, method: str,
                span: float | None = None) -> Interval:
    from scipy import stats

    half = float(stats.t.ppf((1 + confidence) / 2, df) * se)
    return Interval(float(mean), float(mean - half), float(mean + half), int(n), confidence, unit, method,
                    None if df == n - 1 else float(df), span=span)


def mean_ci(values: np.ndarray | list[float], confidence: float = 0.95, unit: str = "") -> Interval:
    """Mean of ``values`` (one per independent ``unit``) with its t-interval; a single value has no interval
    (lo = hi, n = 1: the rules call it inconclusive)."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        raise ValueError("mean_ci needs at least one value")
    if v.size == 1:
        return Interval(float(v[0]), float(v[0]), float(v[0]), 1, confidence, unit)
    return _t_interval(v.mean(), v.std(ddof=1) / math.sqrt(v.size), v.size - 1, v.size, confidence, unit, "t")


def paired_diff_ci(a: np.ndarray | list[float], b: np.ndarray | list[float], confidence: float = 0.95,
                   unit: str = "") -> Interval:
    """The t-interval of the per-unit differences a_i - b_i (methods run on the same units)."""
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"paired_diff_ci needs one value per unit in both arms, got {a.size} and {b.size}")
    return replace(mean_ci(a - b, confidence, unit), method="paired t")


def cluster_mean_ci(values: np.ndarray | list[float], clusters: np.ndarray | list, confidence: float = 0.95,
                    unit: str = "") -> Interval:
    """Mean of samples that share units (``clusters[i]`` is sample i's unit) with the CR1 cluster-robust interval
    on G - 1 degrees of freedom; n = G, the number of units."""
    y = np.asarray(values, dtype=float).ravel()
    _, g = np.unique(np.asarray(clusters).ravel(), return_inverse=True)
    if g.size != y.size or y.size == 0:
        raise ValueError(f"cluster_mean_ci needs one cluster label per value (got {g.size} for {y.size})")
    groups = int(g.max()) + 1
    mean = float(y.mean())
    if groups < 2:
        return Interval(mean, mean, mean, groups, confidence, unit, "cluster t")
    scores = np.bincount(g, weights=y - mean, minlength=groups)
    se = math.sqrt(groups / (groups - 1) * float(np.sum(scores**2))) / y.size
    return _t_interval(mean, se, groups - 1, groups, confidence, unit, "cluster t")


def proportion_ci(successes: int, trials: int, confidence: float = 0.95, method: str = "clopper-pearson",
                  unit: str = "") -> Interval:
    """The fraction successes / trials with its exact Clopper-Pearson (or Wilson) interval; n = trials."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"proportion_ci needs 0 <= successes <= trials, trials > 0 (got {successes}/{trials})")
    if method not in ("clopper-pearson", "wilson"):
        raise ValueError(f"proportion_ci method must be clopper-pearson or wilson, got {method!r}")
    from scipy import stats

    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(
        confidence, method="exact" if method == "clopper-pearson" else "wilson")
    return Interval(successes / trials, float(ci.low), float(ci.high), int(trials), confidence, unit, method,
                    successes=int(successes))


def korn_graubard(p: float, effective_n: float, df: float, confidence: float) -> tuple[float, float]:
    """Korn & Graubard's (1998) interval of a clustered proportion p: Clopper-Pearson at n* = effective_n
    (z_{(1+c)/2} / t_{df,(1+c)/2})^2 and x* = p n*, [B(a/2; x*, n* - x* + 1), B(1 - a/2; x* + 1, n* - x*)]
    (lo = 0 at x* = 0, hi = 1 at x* = n*)."""
    from scipy.special import betaincinv, ndtri, stdtrit

    a = 1 - confidence
    n = effective_n * (float(ndtri(1 - a / 2)) / float(stdtrit(max(df, 1.0), 1 - a / 2))) ** 2
    x = p * n
    lo = 0.0 if x <= 0 else float(betaincinv(x, n - x + 1, a / 2))
    hi = 1.0 if x >= n else float(betaincinv(x + 1, n - x, 1 - a / 2))
    return lo, hi


def cluster_proportion_ci(outcomes: np.ndarray | list, clusters: np.ndarray | list, confidence: float = 0.95,
                          unit: str = "") -> Interval:
    """The share p of true ``outcomes`` (0/1) whose samples share units (``clusters[i]`` is outcome i's unit), with
    Korn & Graubard's interval (``korn_graubard``) at n* = p(1 - p) / v, v = G / (G - 1) sum_g (k_g - p N_g)^2 / N^2
    the CR1 variance of p (n* = N when v = 0 or n* > N: clustering never narrows below the binomial); n = G."""
    y = np.asarray(outcomes, dtype=float).ravel()
    _, g = np.unique(np.asarray(clusters).ravel(), return_inverse=True)
    if g.size != y.size or y.size == 0:
        raise ValueError(f"cluster_proportion_ci needs one cluster label per outcome (got {g.size} for {y.size})")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("cluster_proportion_ci needs 0/1 outcomes")
    groups, total = int(g.max()) + 1, y.size
    p = float(y.mean())
    if groups < 2:
        return Interval(p, p, p, groups, confidence, unit, "korn-graubard")
    scores = np.bincount(g, weights=y - p, minlength=groups)
    v = groups / (groups - 1) * float(np.sum(scores**2)) / total**2
    n_eff = float(total) if v <= 0 else min(float(total), p * (1 - p) / v)
    lo, hi = korn_graubard(p, n_eff, groups - 1, confidence)
    return Interval(p, lo, hi, groups, confidence, unit, "korn-graubard", effective_n=n_eff)


def bootstrap_ratio_ci(a: np.ndarray | list[float], b: np.ndarray | list[float], confidence: float = 0.95,
                       unit: str = "", paired: bool = True, resamples: int = 4000, seed: int = 0) -> Interval:
    """mean(a) / mean(b) with the percentile interval of ``resamples`` bootstrap resamples of the units (the same
    resampled units in both arms when ``paired``), drawn from ``seed``: a function of its inputs."""
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if paired and a.shape != b.shape:
        raise ValueError(f"a paired ratio needs one value per unit in both arms, got {a.size} and {b.size}")
    n = min(a.size, b.size)
    estimate = float(a.mean() / b.mean())
    if n < 2:
        return Interval(estimate, estimate, estimate, n, confidence, unit, "bootstrap")
    rng = np.random.default_rng(seed)
    ia = rng.integers(0, a.size, (resamples, a.size))
    ib = ia if paired else rng.integers(0, b.size, (resamples, b.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = a[ia].mean(axis=1) / b[ib].mean(axis=1)
    draws = np.sort(draws[np.isfinite(draws)])
    alpha = 1 - confidence
    lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return Interval(estimate, float(lo), float(hi), n, confidence, unit, "bootstrap", draws=tuple(draws.tolist()))


def slope_ci(x: np.ndarray | list[float], y: np.ndarray | list[float], confidence: float = 0.95,
             unit: str = "") -> Interval:
    """The OLS slope of y on x with its t interval on n - 2 degrees of freedom (se = sqrt(RSS / (n - 2) / Sxx));
    ``span`` = max(x) - min(x)."""
    x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    if x.size != y.size or x.size < 3:
        raise ValueError(f"slope_ci needs >= 3 (x, y) pairs of equal length (got {x.size}, {y.size})")
    dx = x - x.mean()
    sxx = float(dx @ dx)
    slope = float(dx @ (y - y.mean()) / sxx)
    resid = y - y.mean() - slope * dx
    se = math.sqrt(float(resid @ resid) / (x.size - 2) / sxx)
    return _t_interval(slope, se, x.size - 2, x.size, confidence, unit, "fit", span=float(x.max() - x.min()))
