"""Query noise true to each memory's geometry, its log-density, and the two decoders of the retrieval ladder.

Euclidean memories (rows m_i of the memory's input space, queries.input_space): q = m_i + sigma z, z ~ N(0, I_dim),
sigma = rho s / sqrt(dim) with s the RMS norm of the memories, so rho is the query's noise-to-signal ratio.

HAMN (the Poincare ball B_c of curvature -c): a wrapped normal at the stored point p (Nagano et al. 2019, ICML;
Mathieu et al. 2019, NeurIPS), isotropic Gaussian noise in an orthonormal frame of the tangent space at p pushed
onto the ball by the exponential map at p,
    q = exp_p(u / lambda_p),   u ~ N(0, sigma^2 I_dim),   lambda_p = 2 / (1 - c ||p||^2),
(geoopt's tangent vectors are in ambient coordinates, whose Riemannian norm is lambda_p times the Euclidean one), so
lambda_p log_p(q) = u has covariance sigma^2 I; sigma = rho s / sqrt(dim) with s the RMS hyperbolic distance of
the memories from the origin (the same noise-to-signal ratio, measured in the ball's own metric). For leaves near the
boundary its nearest-leaf decoder is nearly immune to it: a geodesic from p in a random direction moves away from
p's siblings (hyperbolic volume growth), so leaf accuracy stays near 1 at any rho and no rho calibrates it to a
target like 0.8 (retrieve records the floor, ``wrapped_floor``).

Log-density w.r.t. each geometry's volume of the noise centred at m_i, r = d(m_i, q) (Euclidean or d_c):
    Euclidean:  log f_i(q) = -r^2 / (2 sigma^2) - (dim / 2) log(2 pi sigma^2),
    wrapped:    log f_i(q) = -r^2 / (2 sigma^2) - (dim - 1) log(sinh(sqrt c r) / (sqrt c r)) - (dim / 2) log(2 pi sigma^2).
Both decrease in r (sinh(x) / x grows), so the ML decoder argmax_i f_i(q) of equally likely leaves is each geometry's
nearest-leaf decoder.
"""

from __future__ import annotations

import math

import torch

from .hyperbolic_memory import energy_terms, poincare_ball

MODES = ("euclidean", "tangent", "wrapped")


def hyperbolic_distance(x: torch.Tensor, y: torch.Tensor, c: float) -> torch.Tensor:
    """d_c(x_i, y_j) for all pairs, from -c <L(x), L(y)>_L = cosh(sqrt c d) (accurate near the boundary, where
    geoopt's artanh saturates)."""
    return torch.acosh((-energy_terms(x, y, c)[0]).clamp(min=1.0)) / c**0.5


def scale(memories: torch.Tensor, mode: str, c: float) -> float:
    """s: the RMS norm of the memories (euclidean), of their tangent vectors log_0(p) (tangent), or their RMS
    hyperbolic distance from the origin (wrapped)."""
    if mode == "euclidean":
        return float(memories.norm(dim=1).pow(2).mean().sqrt())
    tangent = poincare_ball(c).logmap0(memories)
    return float(tangent.norm(dim=1).pow(2).mean().sqrt()) * (2 if mode == "wrapped" else 1)


def noise_sigma(memories: torch.Tensor, rho: torch.Tensor | float, mode: str, c: float) -> torch.Tensor:
    """sigma_j = rho_j s / sqrt(dim), a column (one row per query, or one row for a single rho)."""
    rho = torch.as_tensor(rho, dtype=memories.dtype, device=memories.device).reshape(-1, 1)
    return rho * scale(memories, mode, c) / memories.shape[1] ** 0.5


def noisy_queries(memories: torch.Tensor, nodes: torch.Tensor, rho: torch.Tensor | float, z: torch.Tensor,
                  mode: str, c: float) -> torch.Tensor:
    """q_j around m_(nodes_j) at noise ratio rho_j (a number or one per query) from standard normal z_j, in the
    noise ``mode`` (module docstring)."""
    sigma = noise_sigma(memories, rho, mode, c)
    p = memories[nodes]
    if mode == "euclidean":
        return p + sigma * z
    ball = poincare_ball(c)
    if mode == "tangent":
        return ball.expmap0(ball.logmap0(p) + sigma * z, project=False)
    lam = 2 / (1 - c * (p**2).sum(dim=1, keepdim=True))
    return ball.expmap(p, sigma * z / lam, project=False)


def log_sinhc(x: torch.Tensor) -> torch.Tensor:
    """log(sinh(x) / x) for x >= 0, stable for large x (x + log1p(-exp(-2x)) - log(2x)) and small x (x^2 / 6)."""
    big = x > 1e-3
    xb = torch.where(big, x, torch.ones_like(x))
    return torch.where(big, xb + torch.log1p(-torch.exp(-2 * xb)) - torch.log(2 * xb), x**2 / 6)


def log_likelihood(queries: torch.Tensor, memories: torch.Tensor, sigma: torch.Tensor | float, mode: str,
                   c: float) -> torch.Tensor:
    """log f_i(q_j) (rows: queries, columns: memories) of the noise of scale sigma (a number or a column, one row
    per query) centred at each memory, up to a term common to every memory (module docstring)."""
    dim = memories.shape[1]
    sigma = torch.as_tensor(sigma, dtype=queries.dtype, device=queries.device).reshape(-1, 1)
    norm = dim / 2 * torch.log(2 * math.pi * sigma**2)
    if mode == "euclidean":
        return -torch.cdist(queries, memories) ** 2 / (2 * sigma**2) - norm
    if mode == "tangent":
        ball = poincare_ball(c)
        return -torch.cdist(ball.logmap0(queries), ball.logmap0(memories)) ** 2 / (2 * sigma**2) - norm
    r = hyperbolic_distance(queries, memories, c)
    return -(r**2) / (2 * sigma**2) - (dim - 1) * log_sinhc(c**0.5 * r) - norm
