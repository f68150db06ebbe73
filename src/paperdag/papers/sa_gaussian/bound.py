"""The explicit Wasserstein bound for i.i.d. noise, evaluated with each setting's constants (Stein's method).

Setting: x' = x - alpha (g(x) + w), w i.i.d., mean 0, covariance Gamma, independent of x; g mu-strongly monotone
(<g(x) - g(z), x - z> >= mu |x - z|^2), L-Lipschitz, with |D^2 g| <= M2; A = Dg(x*), Sigma: A Sigma + Sigma A^T =
Gamma; y = (x - x*) / alpha^(1/2) at stationarity. This is the paper's route (Stein's method for the OU generator
L f = tr(Gamma D^2 f) / 2 - <A y, D f>), derived here with explicit constants because the paper's own constants are
not available to this package; the bound has the paper's order alpha^(1/2) log(1/alpha).

Stein factors (h 1-Lipschitz, f = -int_0^inf (P_t h - E h(Z)) dt solves L f = h - E h(Z); P_t h(y) =
E h(e^{-tA} y + Sigma_t^(1/2) xi), Sigma_t = Sigma - e^{-tA} Sigma e^{-tA^T}; Gaussian integration by parts):
    |D f| <= k1 = int n(t) dt,   |D^2 f| <= k2 = int sqrt(2/pi) n(t) q(t)^(-1/2) dt,
    |D^2 f(y) - D^2 f(z)| <= omega(|y - z|),  omega(r) = inf_delta 2 int_0^delta k2(t) dt + r int_delta^inf k3(t) dt,
with n(t) = |e^{-tA}|, q(t) = lambda_min(e^{tA} Sigma e^{tA^T} - Sigma), k2(t) = sqrt(2/pi) n q^(-1/2), k3(t) =
sqrt(2) n q^(-1) (|Sigma_t^(-1/2) e^{-tA}|^2 = 1 / q(t)). n is nonincreasing (|e^{-tA} v|^2 decays at rate
2 lambda_min((A + A^T)/2) > 0) and q nondecreasing, so left Riemann sums on a grid are upper bounds; q(t) >=
lambda_min(Gamma) t bounds the head [0, t_0], n(t) <= n(T) e^{-mu_A (t - T)} the tail.
Bound: with Delta = y' - y = -alpha g_hat(y) - alpha^(1/2) w, g_hat(y) = g(x* + alpha^(1/2) y) / alpha^(1/2),
stationarity E f(y') = E f(y) and a second-order Taylor expansion (remainder <= |Delta|^2 omega_6(|Delta|),
omega_6(r) = inf_delta int_0^delta k2 + (r / 6) int_delta^inf k3, from int_0^1 (1 - s) omega(s r) ds) give
    W1(y, N(0, Sigma)) <= T1 + T2 + T3,
    T1 = k1 (M2 / 2) alpha^(1/2) E|y|^2    (nonlinearity of g),
    T2 = (alpha / 2) k2 L^2 E|y|^2         (second-order drift),
    T3 = U2 omega_6(U3 / U2) / alpha       (noise; U_p >= E|Delta|^p, omega_6 concave: Jensen under |Delta|^2 dP).
Moments (Lyapunov drift, rho = 1 - 2 alpha mu + alpha^2 L^2 < 1, i.e. alpha < 2 mu / L^2, the theorem's stepsize
condition): E|y|^2 <= s2 / (2 mu - alpha L^2), and with m2 = alpha E|y|^2,
    alpha^2 E|y|^4 <= [(4 |Gamma| + 2 s2) alpha^2 rho m2 + 4 alpha^3 (rho m2)^(1/2) s3 + alpha^4 s4] / (1 - rho^2),
s_p = E|w|^p (s3 <= (s2 s4)^(1/2)); |Delta| <= alpha L |y| + alpha^(1/2) |w| gives U2, U3.
Content: W1 <= E|y - Z| <= (E|y|^2 + tr Sigma)^(1/2) for any coupling, so the bound says something only where it lies
below that trivial coupling bound (with the E|y|^2 bound above).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import expm

from .problems import Problem

TANH_CURVATURE = 4.0 / (3.0 * math.sqrt(3.0))  # max |tanh''|
GRID = 3000  # log-spaced quadrature points in t
EXCESS_KURTOSIS_EXP = 6.0  # E(e - 1)^4 - 3 for e ~ Exp(1)


@dataclass(frozen=True)
class Constants:
    """The theorem's constants of one setting: strong monotonicity mu, Lipschitz L, Hessian bound M2 of g; noise
    moments s2, s3, s4 and |Gamma|; the Stein factors k1, k2 and the grid of omega_6 (heads int_0^delta k2, tails
    int_delta^inf k3 at each grid delta)."""

    mu: float
    lipschitz: float
    hessian: float
    s2: float
    s3: float
    s4: float
    gamma_norm: float
    trace_sigma: float
    k1: float
    k2: float
    heads: np.ndarray
    tails: np.ndarray

    def omega6(self, r: float) -> float:
        """omega_6(r) = inf over the grid's delta of heads + r tails / 6 (an upper bound of the infimum)."""
        return float(np.min(self.heads + r * self.tails / 6.0))


def field_constants(pr: Problem) -> tuple[float, float, float]:
    """(mu, L, M2) of the mean field. Nonlinear g = kappa (x - gamma R tanh(x) - c): Dg = kappa (I - gamma R D),
    D = diag(sech^2 x_i) in [0, 1]^2; lambda_min of the symmetric part is concave and |.| convex in D, so both
    extremes are at the box's vertices; |D^2 g| <= kappa gamma max|tanh''|."""
    c = pr.coef
    if pr.drift == "quadratic":
        return c["a"], c["a"], 0.0
    if pr.drift == "logcosh":  # g' = a + b sech^2 in [a, a + b], |g''| <= b max|tanh''|
        return c["a"], c["a"] + c["b"], c["b"] * TANH_CURVATURE
    if pr.drift == "linear":
        A = np.array(c["A"])
        return float(np.linalg.eigvalsh((A + A.T) / 2).min()), float(np.linalg.norm(A, 2)), 0.0
    if pr.drift == "nonlinear":
        R = np.array(c["R"])
        J = [c["kappa"] * (np.eye(2) - c["gamma"] * R @ np.diag(v)) for v in ((0, 0), (0, 1), (1, 0), (1, 1))]
        return (min(float(np.linalg.eigvalsh((j + j.T) / 2).min()) for j in J),
                max(float(np.linalg.norm(j, 2)) for j in J), c["kappa"] * c["gamma"] * TANH_CURVATURE)
    raise ValueError(f"no explicit bound for the {pr.drift} field")


def noise_moments(pr: Problem) -> tuple[float, float, float]:
    """(E|w|^2, E|w|^3 bound, E|w|^4) for w = L z: Gaussian z, or z = e - 1 with e_i ~ Exp(1) (skewed); with
    M = L^T L, E|w|^4 = (tr M)^2 + 2 tr M^2 + kappa_4 sum_i M_ii^2 (kappa_4 the excess kurtosis of z_i)."""
    if pr.noise not in ("gaussian", "skewed"):
        raise ValueError(f"the explicit bound is for i.i.d. Gaussian or skewed noise, not {pr.noise}")
    L = np.array(pr.coef["L"]) if "L" in pr.coef else np.array([[pr.coef["sigma"]]])
    M = L.T @ L
    kurt = EXCESS_KURTOSIS_EXP if pr.noise == "skewed" else 0.0
    s2 = float(np.trace(M))
    s4 = s2**2 + 2 * float(np.trace(M @ M)) + kurt * float(np.sum(np.diag(M) ** 2))
    return s2, math.sqrt(s2 * s4), s4


def stein_factors(A: np.ndarray, gamma: np.ndarray, sigma: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
    """(k1, k2, heads, tails) of the module docstring by left Riemann sums on a log grid of t (upper bounds)."""
    mu_a = float(np.linalg.eigvalsh((A + A.T) / 2).min())
    lam_g = float(np.linalg.eigvalsh(gamma).min())
    t = np.geomspace(1e-10, 40.0 / mu_a, GRID)
    n = np.linalg.norm(expm(-t[:, None, None] * A), 2, axis=(1, 2))
    grow = expm(t[:, None, None] * A)
    Q = grow @ sigma @ grow.transpose(0, 2, 1) - sigma
    q = np.maximum(np.linalg.eigvalsh((Q + Q.transpose(0, 2, 1)) / 2)[:, 0], lam_g * t)
    k2, k3, dt = math.sqrt(2 / math.pi) * n / np.sqrt(q), math.sqrt(2) * n / q, np.diff(t)
    head = math.sqrt(2 / math.pi) * 2 * math.sqrt(t[0] / lam_g)  # int_0^{t_0} of k2 with q >= lambda_min(Gamma) t
    heads = head + np.r_[0.0, np.cumsum(k2[:-1] * dt)]
    tails = np.r_[np.cumsum((k3[:-1] * dt)[::-1])[::-1], 0.0] + k3[-1] / mu_a
    k1 = t[0] + float(np.sum(n[:-1] * dt)) + n[-1] / mu_a
    return k1, float(heads[-1] + k2[-1] / mu_a), heads, tails


def constants(pr: Problem) -> Constants:
    """Every constant the bound needs for one i.i.d.-noise setting."""
    mu, lip, hess = field_constants(pr)
    s2, s3, s4 = noise_moments(pr)
    A, gamma, sigma = (np.atleast_2d(np.array(m)) for m in (pr.jacobian, pr.noise_cov, pr.sigma))
    k1, k2, heads, tails = stein_factors(A, gamma, sigma)
    return Constants(mu, lip, hess, s2, s3, s4, float(np.linalg.norm(gamma, 2)), float(np.trace(sigma)), k1, k2,
                     heads, tails)


@dataclass(frozen=True)
class Bound:
    """The bound at one stepsize: its three terms, the E|y|^2 bound and the trivial coupling bound (NaN where the
    stepsize condition alpha < 2 mu / L^2 fails)."""

    alpha: float
    terms: tuple[float, float, float]
    second_moment: float
    trivial: float

    @property
    def value(self) -> float:
        return float(sum(self.terms))

    @property
    def has_content(self) -> bool:
        """Below the trivial coupling bound (NaN compares False)."""
        return self.value < self.trivial


def moment_bounds(c: Constants, alpha: float) -> tuple[float, float]:
    """(E|y|^2, E|y|^4) bounds of the module docstring; NaN where rho >= 1."""
    a, L = alpha, c.lipschitz
    rho = 1 - 2 * a * c.mu + a * a * L * L
    if rho >= 1:
        return math.nan, math.nan
    y2 = c.s2 / (2 * c.mu - a * L * L)
    m2 = a * y2
    y4 = ((4 * c.gamma_norm + 2 * c.s2) * a * a * rho * m2 + 4 * a**3 * math.sqrt(rho * m2) * c.s3
          + a**4 * c.s4) / (1 - rho**2) / (a * a)
    return y2, y4


def evaluate_bound(c: Constants, alpha: float) -> Bound:
    """T1 + T2 + T3 of the module docstring at stepsize alpha."""
    a, L = alpha, c.lipschitz
    y2, y4 = moment_bounds(c, alpha)
    if math.isnan(y2):
        return Bound(alpha, (math.nan,) * 3, math.nan, math.nan)
    w1 = math.sqrt(c.s2)  # E|w| <= (E|w|^2)^(1/2)
    u2 = a * a * L * L * y2 + 2 * a**1.5 * L * math.sqrt(y2) * w1 + a * c.s2
    u3 = (a**3 * L**3 * y4**0.75 + 3 * a**2.5 * L * L * y2 * w1 + 3 * a * a * L * math.sqrt(y2) * c.s2
          + a**1.5 * c.s3)
    terms = (c.k1 * c.hessian / 2 * math.sqrt(a) * y2, a / 2 * c.k2 * L * L * y2, u2 * c.omega6(u3 / u2) / a)
    return Bound(alpha, terms, y2, math.sqrt(y2 + c.trace_sigma))


def content_threshold(c: Constants, largest: float, factor: float = 2.0, floor: float = 1e-7) -> float:
    """The largest stepsize on the ladder largest / factor^k (k = 0, 1, ...) at which the bound has content (NaN if
    none down to ``floor``): what a sweep must reach for the bound to be testable."""
    a = largest
    while a >= floor:
        if evaluate_bound(c, a).has_content:
            return a
        a /= factor
    return math.nan
