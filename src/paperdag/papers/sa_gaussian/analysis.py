"""Per setting and stepsize: distances of the steady state to its limit laws, tails, and stationarity checks.

Limit laws ("targets"), each compared through a sample of the same size n (distance.py):
    gaussian       N(0, Sigma), Sigma from the long-run noise covariance (every setting but the quartic one),
    marginal       N(0, Sigma_0), Sigma_0 from the marginal (one-step) noise covariance: the naive limit that
                   ignores the chain's memory (Markovian setting only, the baseline),
    gibbs          p(y) ~ exp(-y^4 / (2 sigma^2)) (quartic setting, gibbs.py),
    best_gaussian  N(0, s^2) with s minimising the W1 to the sample (quartic setting, distance.best_scale).
Checks (the simulation did its job): the relative drift |E|y|^2(T) - E|y|^2(3T/4)| / E|y|^2(T) of the second
moment over the last quarter of burn-in, and, where the stepsize covariance is exact (problems.stepsize_covariance),
the relative Frobenius error of the empirical covariance against it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .distance import best_scale, bootstrap_w1, directions, resample_counts, resample_generator, w1
from .gibbs import sample_gibbs
from .params import AnalysisParams
from .problems import Problem, exact_at_stepsize, limit_covariance, stepsize_covariance
from .tails import tail_table

PRIMARY = {"quartic": "gibbs"}  # the limit law whose rate and envelope are judged; "gaussian" otherwise


def targets(pr: Problem) -> list[str]:
    """The limit laws compared with this setting's steady state."""
    if pr.drift == "quartic":
        return ["gibbs", "best_gaussian"]
    return ["gaussian", "marginal"] if pr.noise == "markov" else ["gaussian"]


def _sampler(pr: Problem, target: str, y: np.ndarray, rng: np.random.Generator) -> tuple[Any, float]:
    """A function m -> m draws (m x d) of the target law, and the fitted scale s (best_gaussian; NaN otherwise)."""
    if target == "gibbs":
        return (lambda m: sample_gibbs(rng, m, pr.coef["sigma"])[:, None]), float("nan")
    if target == "best_gaussian":
        s = best_scale(y[:, 0], rng.standard_normal(len(y)))
        return (lambda m: s * rng.standard_normal((m, 1))), s
    jac = np.array(pr.jacobian)
    cov = np.array(pr.sigma) if target == "gaussian" else limit_covariance(jac, np.array(pr.noise_cov))
    L = np.linalg.cholesky(cov)
    return (lambda m: rng.standard_normal((m, pr.dim)) @ L.T), float("nan")


def distances(pr: Problem, alpha: float, y: np.ndarray, p: AnalysisParams, rng: np.random.Generator,
              device: str = "cpu") -> list[dict[str, Any]]:
    """Per target: W1 (sliced in 2-D) to a same-size target sample, the MC floor (two fresh target samples) and
    ``p.bootstrap`` replicates, computed on ``device`` (the target samples are drawn by ``rng`` on the host)."""
    proj, rows = directions(pr.dim, p.projections), []
    for target in targets(pr):
        draw, scale = _sampler(pr, target, y, rng)
        ref = draw(len(y))
        rows.append(dict(target=target, alpha=alpha, w1=w1(y, ref, proj, device),
                         floor=w1(draw(len(y)), draw(len(y)), proj, device),
                         boot=bootstrap_w1(y, ref, proj, p.bootstrap, rng, device).tolist(), scale=scale))
    return rows


def tails(pr: Problem, alpha: float, y: np.ndarray, levels: list[float]) -> list[dict[str, Any]]:
    """Empirical vs Gaussian-limit tail probabilities P(r > t) per level (none for the quartic setting)."""
    if pr.drift == "quartic":
        return []
    tab = tail_table(y, np.array(pr.sigma), levels)
    return [dict(alpha=alpha, t=float(t), empirical=float(e), gaussian=float(g), se=float(s))
            for t, e, g, s in zip(tab["t"], tab["empirical"], tab["gaussian"], tab["se"], strict=True)]


def checks(pr: Problem, alpha: float, y: np.ndarray, m2_three_quarters: float, m2_end: float, steps: int,
           reps: int, rng: np.random.Generator, device: str = "cpu") -> dict[str, Any]:
    """Stationarity drift, covariance error against the exact stepsize covariance (NaN where none is exact),
    |mean y|, and tr Cov(x - x*) = alpha^(2e) tr Cov(y) (e = 1/4 quartic, 1/2 otherwise) with ``reps`` bootstrap
    replicates: the resample's unbiased variance sum_i c_i (y_i - m_c)^2 / (n - 1), m_c = sum_i c_i y_i / n, from its
    multiplicities c (distance.resample_counts, on ``device``; on the CPU the draws of y[rng.integers(0, n, n)])."""
    cov = np.atleast_2d(np.cov(y.T))
    err = float("nan")
    if exact_at_stepsize(pr):
        exact = stepsize_covariance(np.array(pr.jacobian), np.array(pr.noise_cov), alpha)
        err = float(np.linalg.norm(cov - exact) / np.linalg.norm(exact))
    e = 0.25 if pr.drift == "quartic" else 0.5
    n, yt, gen, boot = len(y), torch.as_tensor(y, dtype=torch.float64).to(device), resample_generator(rng, device), []
    for _ in range(reps):
        c = resample_counts(n, rng, gen, device).to(torch.float64)[:, None]
        mean = (c * yt).sum(0) / n
        boot.append(float((c * (yt - mean) ** 2).sum() / (n - 1)) * alpha ** (2 * e))
    return dict(alpha=alpha, steps=steps, drift=abs(m2_end - m2_three_quarters) / m2_end, cov_error=err,
                mean_norm=float(np.linalg.norm(y.mean(0))), var_x=float(np.trace(cov)) * alpha ** (2 * e),
                var_x_boot=boot)
