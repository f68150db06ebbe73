"""Intervals over a crossed design: every training seed judged on every target, both drawn at random.

One value per cell (the mean of the cell's samples), y_st = mu + a_s + b_t + e_st for S seeds x T targets, with
a_s ~ (0, s2_seed), b_t ~ (0, s2_target), e_st ~ (0, s2_resid). The grand mean's variance is

    Var(ybar) = s2_seed / S + s2_target / T + s2_resid / (S T),

so the seed term shrinks only with seeds: an interval that resamples (seed, target) cells as if independent leaves
most of it out when S is small. The two-way ANOVA mean squares

    MS_seed = T sum_s (ybar_s. - ybar)^2 / (S - 1),  MS_target = S sum_t (ybar_.t - ybar)^2 / (T - 1),
    MS_resid = sum_st (y_st - ybar_s. - ybar_.t + ybar)^2 / ((S - 1)(T - 1))

have expectations T s2_seed + s2_resid, S s2_target + s2_resid and s2_resid; a component estimated below zero is set
to zero (the truncated ANOVA estimator), which drops its mean square from the combination:

    Var(ybar) = (c_seed MS_seed + c_target MS_target + c_resid MS_resid) / (S T),

c = 1 for a component kept, c_resid = 1 - c_seed - c_target, with Satterthwaite's (1946) degrees of freedom
df = (sum c MS)^2 / sum (c MS)^2 / df_MS. With one seed (or one target) the design is one-way: the seed term cannot
be estimated and the interval is over targets (seeds) alone, df T - 1 (S - 1).

Ratios of means and shares of successes are linearised (delta method) at their estimate R: z_st = (a_st - R b_st) /
bbar, whose grand mean's variance is R's. A share keeps its bounded scale: Korn & Graubard's interval at the effective
size p (1 - p) / Var, on the Satterthwaite df (``paperdag.common.stats.korn_graubard``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from paperdag.common.stats import Interval, _t_interval, korn_graubard

MAX_SEEDS = 1000  # beyond this a projection says "more than"


@dataclass(frozen=True)
class Components:
    """The variance components of an S x T grid of cell values (module docstring), truncated at zero."""

    seeds: int
    targets: int
    seed: float
    target: float
    resid: float

    def variance(self, seeds: int | None = None) -> float:
        """Var(ybar) = s2_seed / S + s2_target / T + s2_resid / (S T), at ``seeds`` seeds (default: the grid's)."""
        s, t = seeds or self.seeds, self.targets
        return self.seed / s + self.target / t + self.resid / (s * t)

    def df(self, seeds: int | None = None) -> float:
        """Satterthwaite's df of ``variance(seeds)`` from the expected mean squares at ``seeds`` seeds."""
        s, t = seeds or self.seeds, self.targets
        if s == 1 or t == 1:
            return float(max(s, t) - 1)
        terms = [(t * self.seed + self.resid, s - 1) if self.seed > 0 else (0.0, 1),
                 (s * self.target + self.resid, t - 1) if self.target > 0 else (0.0, 1),
                 (self.resid * (1 - (self.seed > 0) - (self.target > 0)), (s - 1) * (t - 1))]
        total = sum(ms for ms, _ in terms)
        spread = sum(ms * ms / d for ms, d in terms)
        return float(total * total / spread) if spread > 0 else float(s * t - 1)

    def row(self) -> dict[str, float | int]:
        """The components as recorded in metrics (per cell, on the linearised scale)."""
        return {"seeds": self.seeds, "targets": self.targets, "seed": _sig(self.seed), "target": _sig(self.target),
                "residual": _sig(self.resid), "df": round(self.df(), 2)}


def _sig(x: float) -> float:
    return float(f"{x:.4g}")


def components(grid: np.ndarray) -> Components:
    """The truncated ANOVA components of an S x T grid (rows seeds, columns targets); one-way when S or T is 1
    (the single factor's spread is then ``target`` or ``seed``, every other component 0)."""
    y = np.asarray(grid, dtype=float)
    s, t = y.shape
    if s * t < 2 or not np.all(np.isfinite(y)):
        raise ValueError(f"a crossed interval needs a complete grid of >= 2 finite cells (got {s} x {t})")
    m = y.mean()
    row, col = y.mean(axis=1) - m, y.mean(axis=0) - m
    if s == 1:
        return Components(1, t, 0.0, float(np.sum(col**2) / (t - 1)), 0.0)
    if t == 1:
        return Components(s, 1, float(np.sum(row**2) / (s - 1)), 0.0, 0.0)
    ms_seed, ms_target = t * float(np.sum(row**2)) / (s - 1), s * float(np.sum(col**2)) / (t - 1)
    ms_resid = float(np.sum((y - m - row[:, None] - col[None, :]) ** 2)) / ((s - 1) * (t - 1))
    return Components(s, t, max(0.0, (ms_seed - ms_resid) / t), max(0.0, (ms_target - ms_resid) / s), ms_resid)


@dataclass(frozen=True)
class Crossed:
    """An interval over a crossed design with the components it came from (n = S x T cells)."""

    interval: Interval
    components: Components

    def seeds_to_resolve(self, resolved: Callable[[float, float], bool]) -> int | None:
        """The fewest seeds (at the same targets, the observed components and estimate) whose projected interval
        satisfies ``resolved(lo, hi)``; None when not even ``MAX_SEEDS`` would (the target term stays)."""
        from scipy.special import stdtrit

        x, c = self.interval, self.components
        if c.targets < 2:
            return None
        q = (1 + x.confidence) / 2
        for s in range(2, MAX_SEEDS + 1):
            half = float(stdtrit(max(c.df(s), 1.0), q)) * math.sqrt(c.variance(s))
            if resolved(x.mean - half, x.mean + half):
                return s
        return None


def grid(values: np.ndarray | pd.Series, seeds: np.ndarray | pd.Series, targets: np.ndarray | pd.Series,
         how: str = "mean") -> pd.DataFrame:
    """The S x T table of each (seed, target) cell's mean (or sum) of ``values``; refuses an incomplete grid."""
    frame = pd.DataFrame({"v": np.asarray(values, dtype=float), "s": np.asarray(seeds), "t": np.asarray(targets)})
    table = frame.groupby(["s", "t"])["v"].agg(how).unstack("t")
    if table.isna().to_numpy().any():
        raise ValueError("a crossed interval needs every seed judged on every target (a cell is empty)")
    return table


def _t(mean: float, comp: Components, confidence: float, unit: str) -> Crossed:
    return Crossed(_t_interval(mean, math.sqrt(comp.variance()), max(comp.df(), 1.0), comp.seeds * comp.targets,
                               confidence, unit, "cluster t"), comp)


def crossed_mean_ci(values: np.ndarray | pd.Series, seeds: np.ndarray | pd.Series, targets: np.ndarray | pd.Series,
                    confidence: float = 0.95, unit: str = "") -> Crossed:
    """The mean of the cells' means (each (seed, target) cell counts once, however many samples it has) with its
    crossed t interval."""
    y = grid(values, seeds, targets).to_numpy()
    return _t(float(y.mean()), components(y), confidence, unit)


def crossed_ratio_ci(num: np.ndarray | pd.Series, den: np.ndarray | pd.Series, seeds: np.ndarray | pd.Series,
                     targets: np.ndarray | pd.Series, confidence: float = 0.95, unit: str = "") -> Crossed:
    """R = mean of the cells' ``num`` means / mean of their ``den`` means (paired: both from the same rows), with
    the crossed t interval of its linearisation z_st = (num_st - R den_st) / mean(den)."""
    a, b = grid(num, seeds, targets).to_numpy(), grid(den, seeds, targets).to_numpy()
    ratio = float(a.mean() / b.mean())
    return _t(ratio, components((a - ratio * b) / b.mean()), confidence, unit)


def crossed_proportion_ci(successes: np.ndarray | pd.Series, trials: np.ndarray | pd.Series,
                          seeds: np.ndarray | pd.Series, targets: np.ndarray | pd.Series, confidence: float = 0.95,
                          unit: str = "") -> Crossed:
    """The share p = sum successes / sum trials (rows: designs with k of m residues) with Korn & Graubard's interval
    at n* = p (1 - p) / Var(p) (capped at the trials: clustering never narrows below the binomial) on the crossed
    df, Var(p) that of z_st = (k_st - p m_st) / mbar over the cells' totals."""
    k, m = grid(successes, seeds, targets, "sum").to_numpy(), grid(trials, seeds, targets, "sum").to_numpy()
    total = float(m.sum())
    p = float(k.sum() / total)
    comp = components((k - p * m) / m.mean())
    v = comp.variance()
    n_eff = total if v <= 0 else min(total, p * (1 - p) / v)
    lo, hi = korn_graubard(p, n_eff, comp.df(), confidence)
    return Crossed(Interval(p, lo, hi, comp.seeds * comp.targets, confidence, unit, "korn-graubard", comp.df(),
                            effective_n=n_eff), comp)


def power(c: Components, seeds: int, estimate: float, boundary: float, confidence: float = 0.95, draws: int = 2000,
          seed: int = 0) -> float:
    """The share of ``draws`` simulated grids (``seeds`` x ``c.targets`` cells, normal seed, target and residual
    terms of ``c``'s variances, mean ``estimate``) whose crossed interval lies wholly above ``boundary``: the power
    of a one-sided decision at (1 - confidence) / 2 when the true value is ``estimate``, the interval's own
    truncation and Satterthwaite df included. A function of its arguments (``seed``)."""
    from scipy.special import stdtrit

    rng = np.random.default_rng(seed)
    t = c.targets
    y = (estimate + rng.normal(0, math.sqrt(c.seed), (draws, seeds, 1))
         + rng.normal(0, math.sqrt(c.target), (draws, 1, t)) + rng.normal(0, math.sqrt(c.resid), (draws, seeds, t)))
    hits = 0
    for g in y:
        d = components(g)
        half = float(stdtrit(max(d.df(), 1.0), (1 + confidence) / 2)) * math.sqrt(d.variance())
        hits += g.mean() - half > boundary
    return hits / draws
