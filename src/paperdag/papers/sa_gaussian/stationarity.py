"""Stationarity of the simulated chains, with Monte-Carlo intervals over the chains, and the unit of every interval
over chains: the ``kilochain`` (``BLOCK`` = 1,000 independent chains; a sample-size plan counts at most 1e5 units and
the sweep runs up to 1e6 chains per stepsize, so the unit is a block of them, n = chains / 1,000).

Drift: d = |E|y|^2(T) - E|y|^2(3T/4)| / E|y|^2(T), the relative change of the second moment over the last quarter
of burn-in (verify's checks, probe.json). Each moment is a mean over the N chains with relative standard error
se = sd(|y|^2) / (sqrt(N) E|y|^2) (``moment_se``, measured on the final states); the two means are nearly
independent (the second moment's autocorrelation over a quarter of the burn-in is ~exp(-nats / 2)), so d has the
standard error sqrt(2) se and the normal 95% interval d +- 1.96 sqrt(2) se (``drift_interval``).
Covariance error: e = ||Cov_hat(y) - S_alpha||_F / ||S_alpha||_F against the exact stepsize covariance S_alpha
(linear field, i.i.d. noise), with the normal bootstrap interval e +- 1.96 sd of e over R resamples of the chains
(``covariance_interval``; a resample is its multinomial counts c, Cov = sum_i c_i (y_i - m)(y_i - m)^T / (N - 1)
with m = sum_i c_i y_i / N: the covariance of the resampled rows without materialising them).
"""

from __future__ import annotations

import math

import numpy as np

from paperdag.common.stats import Interval

Z95 = 1.96
BLOCK, UNIT = 1000, "kilochain"


def over_chains(mean: float, lo: float, hi: float, chains: int, method: str) -> Interval:
    """An interval over ``chains`` independent chains, counted in kilochains (module docstring)."""
    return Interval(float(mean), float(lo), float(hi), int(chains) // BLOCK, 0.95, UNIT, method)


def moment_se(y: np.ndarray) -> float:
    """The relative standard error sd(|y|^2) / (sqrt(N) mean(|y|^2)) of the second moment of N states (N x d)."""
    r2 = np.einsum("ij,ij->i", y, y)
    return float(r2.std(ddof=1) / (math.sqrt(len(r2)) * r2.mean()))


def drift_interval(drift: float, se: float, chains: int) -> Interval:
    """The drift d with its normal interval d +- 1.96 sqrt(2) se (module docstring), over ``chains`` chains."""
    half = Z95 * math.sqrt(2.0) * se
    return over_chains(drift, drift - half, drift + half, chains, "given")


def covariance_error(y: np.ndarray, exact: np.ndarray, counts: np.ndarray | None = None) -> float:
    """||Cov_hat(y) - exact||_F / ||exact||_F for states y (N x d), the rows weighted by ``counts`` (a resample's
    multinomial counts; all ones when None)."""
    c = np.ones(len(y)) if counts is None else counts.astype(float)
    z = y - (c @ y) / len(y)
    cov = (z * c[:, None]).T @ z / (len(y) - 1)
    return float(np.linalg.norm(cov - exact) / np.linalg.norm(exact))


def covariance_interval(y: np.ndarray, exact: np.ndarray, reps: int, rng: np.random.Generator) -> Interval:
    """The covariance error with its normal bootstrap interval over ``reps`` resamples of the chains."""
    n = len(y)
    boot = [covariance_error(y, exact, np.bincount(rng.integers(0, n, n), minlength=n)) for _ in range(reps)]
    e, half = covariance_error(y, exact), Z95 * float(np.std(boot, ddof=1))
    return over_chains(e, e - half, e + half, len(y), "bootstrap")
