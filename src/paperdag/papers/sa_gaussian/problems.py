"""The SA problems x_{k+1} = x_k - alpha (g(x_k) + w_k) and their exact Gaussian limits.

Mean fields g (x* the root of g, A = Dg(x*) its Jacobian, mu the contraction rate used for the burn-in):
    quadratic   g(x) = a x                          (SGD on f = a x^2 / 2; x* = 0, A = a, mu = a),
    logcosh     g(x) = a x + b tanh(x - c)          (SGD on f = a x^2/2 + b log cosh(x - c); x* by brentq,
                                                     A = a + b sech^2(x* - c), mu = a: f is a-strongly convex),
    linear      g(x) = A x - b                      (linear SA, A non-symmetric Hurwitz; x* = A^-1 b,
                                                     mu = lambda_min((A + A^T)/2) > 0),
    nonlinear   g(x) = kappa (x - F(x)),  F(x) = gamma R tanh(x) + c   (contractive SA: F is a gamma-contraction,
                                                     x* = F(x*) by fixed-point iteration, mu = kappa (1 - gamma);
                                                     its noise covariance is s^2 Gamma),
    quartic     g(x) = x^3                          (SGD on f = x^4/4: convex, not strongly; x* = 0).
Noise w_k: i.i.d. Gaussian N(0, Gamma), i.i.d. skewed L (e - 1) with e_i ~ Exp(1) and L L^T = Gamma, Markovian
phi(s_k) for a finite chain s_k, or Rademacher +- sigma.
Gaussian limit (Stein / Lyapunov): y = (x - x*) / sqrt(alpha) -> N(0, Sigma) with
    A Sigma + Sigma A^T = Gamma_LR          (scipy.linalg.solve_continuous_lyapunov),
Gamma_LR the long-run covariance of the noise (= Gamma for i.i.d. noise; markov.py for the chain).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import solve_continuous_lyapunov, solve_discrete_lyapunov
from scipy.optimize import brentq

from .markov import long_run_covariance, stationary_law
from .params import ProblemParams

SETTINGS = ("sgd_quadratic_gaussian", "sgd_quadratic_skewed", "sgd_logcosh_gaussian", "linear_gaussian",
            "linear_skewed", "linear_markov", "nonlinear_gaussian", "quartic_rademacher")


@dataclass(frozen=True)
class Problem:
    """One setting: its mean field (``drift`` + ``coef``), noise model and exact limit covariance ``sigma``."""

    name: str
    drift: str
    noise: str
    x_star: list[float]
    jacobian: list[list[float]]
    noise_cov: list[list[float]]
    long_run_cov: list[list[float]]
    sigma: list[list[float]]
    mu: float
    coef: dict[str, Any] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return len(self.x_star)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Problem:
        return cls(**d)


def limit_covariance(A: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Sigma solving A Sigma + Sigma A^T = Gamma (A Hurwitz)."""
    return solve_continuous_lyapunov(np.atleast_2d(A), np.atleast_2d(gamma))


def stepsize_covariance(A: np.ndarray, gamma: np.ndarray, alpha: float) -> np.ndarray:
    """Exact stationary covariance of y for a linear field and i.i.d. noise (any law) at stepsize alpha:
    S = (I - alpha A) S (I - alpha A)^T + alpha Gamma (scipy.linalg.solve_discrete_lyapunov); S -> Sigma as
    alpha -> 0 (expand: A S + S A^T - alpha A S A^T = Gamma)."""
    A = np.atleast_2d(A)
    return solve_discrete_lyapunov(np.eye(len(A)) - alpha * A, alpha * np.atleast_2d(gamma))


def exact_at_stepsize(pr: Problem) -> bool:
    """Whether stepsize_covariance is the exact steady-state covariance: linear field, i.i.d. noise."""
    return pr.drift in ("quadratic", "linear") and pr.noise in ("gaussian", "skewed")


def logcosh_root(a: float, b: float, c: float) -> float:
    """x* with a x + b tanh(x - c) = 0 (g is strictly increasing, so the root is unique; bracket |x| <= b / a)."""
    return brentq(lambda x: a * x + b * np.tanh(x - c), -b / a - 1.0, b / a + 1.0, xtol=1e-15, rtol=1e-15)


def rotation(theta: float) -> np.ndarray:
    """R = [[cos, -sin], [sin, cos]]."""
    return np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])


def contraction_fixed_point(gamma: float, R: np.ndarray, c: np.ndarray, tol: float = 1e-15) -> np.ndarray:
    """x* = F(x*) for F(x) = gamma R tanh(x) + c by Banach iteration (error <= gamma^k ||x_1 - x_0|| / (1 - gamma))."""
    x = np.asarray(c, float).copy()
    for _ in range(10_000):
        nxt = gamma * R @ np.tanh(x) + c
        if np.linalg.norm(nxt - x) < tol:
            return nxt
        x = nxt
    raise RuntimeError("fixed-point iteration did not converge")


def _problem(name: str, drift: str, noise: str, x_star: np.ndarray, A: np.ndarray, gamma: np.ndarray,
             gamma_lr: np.ndarray, mu: float, coef: dict[str, Any]) -> Problem:
    A, gamma, gamma_lr = (np.atleast_2d(m) for m in (A, gamma, gamma_lr))
    sigma = limit_covariance(A, gamma_lr) if drift != "quartic" else np.full_like(A, np.nan)
    return Problem(name, drift, noise, np.atleast_1d(x_star).tolist(), A.tolist(), gamma.tolist(), gamma_lr.tolist(),
                   sigma.tolist(), float(mu), coef)


def build_problems(p: ProblemParams) -> dict[str, Problem]:
    """Every setting of SETTINGS from the params (see the module docstring for the equations)."""
    s2, s2_log = np.array([[p.noise_scale**2]]), np.array([[p.logcosh_noise**2]])
    a = p.curvature
    xl = logcosh_root(p.logcosh_curvature, p.logcosh_weight, p.logcosh_shift)
    a_log = p.logcosh_curvature + p.logcosh_weight / np.cosh(xl - p.logcosh_shift) ** 2
    A, b, gam = np.array(p.linear_A), np.array(p.linear_b), np.array(p.noise_cov)
    mu_lin = float(np.linalg.eigvalsh((A + A.T) / 2).min())
    R, c = rotation(p.rotation), np.array(p.offset)
    xn = contraction_fixed_point(p.contraction, R, c)
    gam_n = p.nonlinear_noise**2 * gam
    An = p.drift_scale * (np.eye(2) - p.contraction * R @ np.diag(1.0 / np.cosh(xn) ** 2))
    P, phi = np.array(p.markov_P), np.array(p.markov_values)
    pi = stationary_law(P)
    marginal = phi.T @ np.diag(pi) @ phi
    sig = {"sigma": p.noise_scale}
    lin = {"A": A.tolist(), "b": b.tolist(), "L": np.linalg.cholesky(gam).tolist()}
    return {pr.name: pr for pr in [
        _problem("sgd_quadratic_gaussian", "quadratic", "gaussian", np.zeros(1), a, s2, s2, a, {"a": a, **sig}),
        _problem("sgd_quadratic_skewed", "quadratic", "skewed", np.zeros(1), a, s2, s2, a, {"a": a, **sig}),
        _problem("sgd_logcosh_gaussian", "logcosh", "gaussian", np.array([xl]), a_log, s2_log, s2_log,
                 p.logcosh_curvature, {"a": p.logcosh_curvature, "b": p.logcosh_weight, "c": p.logcosh_shift,
                                       "sigma": p.logcosh_noise}),
        _problem("linear_gaussian", "linear", "gaussian", np.linalg.solve(A, b), A, gam, gam, mu_lin, lin),
        _problem("linear_skewed", "linear", "skewed", np.linalg.solve(A, b), A, gam, gam, mu_lin, lin),
        _problem("linear_markov", "linear", "markov", np.linalg.solve(A, b), A, marginal,
                 long_run_covariance(P, phi), mu_lin, {**lin, "P": P.tolist(), "phi": phi.tolist(),
                                                       "pi": pi.tolist()}),
        _problem("nonlinear_gaussian", "nonlinear", "gaussian", xn, An, gam_n, gam_n,
                 p.drift_scale * (1 - p.contraction),
                 {"kappa": p.drift_scale, "gamma": p.contraction, "R": R.tolist(), "c": c.tolist(),
                  "L": np.linalg.cholesky(gam_n).tolist()}),
        _problem("quartic_rademacher", "quartic", "rademacher", np.zeros(1), np.zeros((1, 1)), s2, s2, np.nan, sig),
    ]}
