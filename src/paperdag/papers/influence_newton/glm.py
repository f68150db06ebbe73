"""Generalised linear losses and a batched Newton solver for weighted empirical risk (torch, float64).

A loss is l(z, y) of the margin z = x . theta. For S weight vectors w_s in {0, 1}^n (w_si = 0 removes point i),
    L_s(theta) = sum_i w_si l(x_i . theta, y_i) + (ridge / 2) ||theta||^2,
    grad L_s   = X^T (w_s * l'(z, y)) + ridge theta,
    hess L_s   = X^T diag(w_s * l''(z, y)) X + ridge I.
All S problems are solved at once: one batched Hessian and one ``torch.linalg.solve`` per Newton iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

CHUNK_ELEMENTS = 1 << 23  # peak size of the (subsets x d x n) intermediate in `hessian`


class Loss(Protocol):
    """A margin loss l(z, y) with its first two derivatives in z."""

    def value(self, z: Tensor, y: Tensor) -> Tensor: ...
    def d1(self, z: Tensor, y: Tensor) -> Tensor: ...
    def d2(self, z: Tensor, y: Tensor) -> Tensor: ...


class Logistic:
    """Logistic loss for y in {0, 1}: l = log(1 + e^z) - y z, l' = sigmoid(z) - y, l'' = sigmoid(z) (1 - sigmoid(z))."""

    def value(self, z: Tensor, y: Tensor) -> Tensor:
        return torch.nn.functional.softplus(z) - y * z

    def d1(self, z: Tensor, y: Tensor) -> Tensor:
        return torch.sigmoid(z) - y

    def d2(self, z: Tensor, y: Tensor) -> Tensor:
        p = torch.sigmoid(z)
        return p * (1.0 - p)


class Squared:
    """Least squares: l = (z - y)^2 / 2, l' = z - y, l'' = 1 (the quadratic case where a Newton step is exact)."""

    def value(self, z: Tensor, y: Tensor) -> Tensor:
        return 0.5 * (z - y) ** 2

    def d1(self, z: Tensor, y: Tensor) -> Tensor:
        return z - y

    def d2(self, z: Tensor, y: Tensor) -> Tensor:
        return torch.ones_like(z)


def objective(X: Tensor, y: Tensor, W: Tensor, theta: Tensor, loss: Loss, ridge: float) -> Tensor:
    """L_s(theta_s) = sum_i W_si l(x_i . theta_s, y_i) + ridge/2 ||theta_s||^2 for each row s (shape S)."""
    z = theta @ X.T
    return (W * loss.value(z, y)).sum(1) + 0.5 * ridge * (theta * theta).sum(1)


def gradient(X: Tensor, y: Tensor, W: Tensor, theta: Tensor, loss: Loss, ridge: float) -> Tensor:
    """grad L_s(theta_s) = X^T (W_s * l'(X theta_s, y)) + ridge theta_s, batched over rows s (shape S x d)."""
    z = theta @ X.T
    return (W * loss.d1(z, y)) @ X + ridge * theta


def hessian(X: Tensor, y: Tensor, W: Tensor, theta: Tensor, loss: Loss, ridge: float) -> Tensor:
    """hess L_s(theta_s) = X^T diag(W_s * l''(X theta_s, y)) X + ridge I, batched (shape S x d x d).

    Computed in chunks of subsets so the S x d x n intermediate stays below ``CHUNK_ELEMENTS``.
    """
    n, d = X.shape
    C = W * loss.d2(theta @ X.T, y)
    chunk = max(1, CHUNK_ELEMENTS // (n * d))
    H = torch.cat([(X.T.unsqueeze(0) * c.unsqueeze(1)) @ X for c in C.split(chunk)])
    return H + ridge * torch.eye(d, dtype=X.dtype, device=X.device)


@dataclass(frozen=True)
class NewtonResult:
    """Minimisers (S x d), final gradient norms (S) and the Newton iterations each problem took (S)."""

    theta: Tensor
    grad_norm: Tensor
    iterations: Tensor


def newton(
    X: Tensor,
    y: Tensor,
    W: Tensor,
    theta0: Tensor,
    loss: Loss,
    ridge: float,
    tol: float,
    max_iter: int,
) -> NewtonResult:
    """Minimise every L_s by damped Newton: theta <- theta - t H^-1 g, t halved until L_s decreases (Armijo).

    A problem stops when ||grad L_s|| <= tol, or when a full Newton step (t = 1) failed to decrease its gradient
    norm: in the quadratic-convergence region that only happens at the float64 round-off floor.
    """
    theta = theta0.clone()
    S = theta.shape[0]
    iterations = torch.zeros(S, dtype=torch.long, device=X.device)
    last = torch.full((S,), torch.inf, dtype=X.dtype, device=X.device)
    full_step = torch.zeros(S, dtype=torch.bool, device=X.device)
    active = torch.arange(S, device=X.device)
    for _ in range(max_iter):
        g = gradient(X, y, W[active], theta[active], loss, ridge)
        norm = g.norm(dim=1)
        stalled = full_step[active] & (norm >= last[active])
        last[active] = norm
        keep = (norm > tol) & ~stalled
        active, g = active[keep], g[keep]
        if active.numel() == 0:
            break
        step = torch.linalg.solve(hessian(X, y, W[active], theta[active], loss, ridge), g.unsqueeze(-1)).squeeze(-1)
        theta[active], t = _armijo(X, y, W[active], theta[active], step, g, loss, ridge)
        full_step[active] = t == 1.0
        iterations[active] += 1
    final = gradient(X, y, W, theta, loss, ridge).norm(dim=1)
    return NewtonResult(theta=theta, grad_norm=final, iterations=iterations)


def _armijo(
    X: Tensor, y: Tensor, W: Tensor, theta: Tensor, step: Tensor, g: Tensor, loss: Loss, ridge: float
) -> tuple[Tensor, Tensor]:
    """(theta - t step, t) with the largest t in {1, 1/2, ...} such that L(theta - t step) <= L(theta) - t g.step / 4.

    Once the Newton decrement g.step falls below float64 resolution of L (relative 1e-10), the full step is taken:
    the iterate is then deep inside the quadratic-convergence region and L can no longer resolve the decrease.
    """
    f0 = objective(X, y, W, theta, loss, ridge)
    decrease = (g * step).sum(1)
    resolvable = decrease > 1e-10 * f0.abs()
    t = torch.ones_like(f0)
    for _ in range(30):
        trial = theta - t.unsqueeze(1) * step
        bad = resolvable & (objective(X, y, W, trial, loss, ridge) > f0 - 0.25 * t * decrease)
        if not bad.any():
            break
        t = torch.where(bad, 0.5 * t, t)
    return theta - t.unsqueeze(1) * step, t
