"""Gradient-based dataset distillation for the two-phase algorithm (network.py), for one fixed initialisation.

A distilled set S = {(x~_m, y~_m)} (m = 1..M, memory M (d + 1) numbers) is initialised from M real points and
optimised with Adam on its inputs and labels:
  phase 1, gradient matching (Zhao, Mopuri & Bilen 2021, ICLR, "Dataset condensation with gradient matching"):
      min_S ||G_S(W_0) - G_D(W_0)||_F^2 / ||G_D(W_0)||_F^2,
      G_S(W)_j = (1/M) sum_m y~_m 1{w_j . x~_m > 0} x~_m  (network.correlation: minus the phase-1 gradient of the
      full data set D, up to diag(a)); the labels start at their least-squares optimum for the initial inputs
      (G_S is linear in y~), and the gate 1{u > 0}, whose derivative is 0, is differentiated in the backward pass
      as sigmoid(u / T) (a straight-through surrogate; the forward pass and the matched gradient stay exact);
  phase 2, performance (kernel-ridge) matching (Nguyen, Chen & Lee 2021, ICLR, "Dataset meta-learning from kernel
      ridge-regression"): with W_1 the first layer the phase-1 set produces, features phi = relu(W_1 x + b) and
      a(S) = Phi~^T (Phi~ Phi~^T + M lam I)^-1 y~ the phase-2 ridge solution on S,
      min_S (1/B) sum_{i in batch} (phi(x_i) . a(S) - y_i)^2 over real batches of the phase-2 data: the second layer
      trained on S must predict like the second layer trained on the real data.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .network import features, ridge


@dataclass(frozen=True)
class Schedule:
    """Adam steps and learning rate of one distillation."""

    steps: int
    lr: float


def _adam(X: Tensor, y: Tensor, loss_fn, schedule: Schedule) -> tuple[Tensor, Tensor, list[float]]:
    """Adam on (X, y) from the given start; returns the optimised copies and the loss curve."""
    X, y = X.clone().requires_grad_(True), y.clone().requires_grad_(True)
    opt = torch.optim.Adam([X, y], lr=schedule.lr)
    curve = []
    for t in range(schedule.steps):
        opt.zero_grad()
        loss = loss_fn(X, y, t)
        loss.backward()
        opt.step()
        curve.append(loss.item())
    return X.detach(), y.detach(), curve


def surrogate_correlation(W: Tensor, X: Tensor, y: Tensor, temperature: float) -> Tensor:
    """G_S(W) in the forward pass; in the backward pass 1{u > 0} is differentiated as sigmoid(u / temperature)."""
    U = X @ W.T
    soft = torch.sigmoid(U / temperature)
    gate = (U > 0).to(X.dtype) + soft - soft.detach()
    return (gate * y.unsqueeze(1)).T @ X / len(y)


def best_labels(W0: Tensor, target: Tensor, X: Tensor) -> Tensor:
    """argmin_y ||G_S(W_0) - target||_F for fixed inputs X: G_S is linear in y, so a least-squares solve."""
    basis = ((X @ W0.T > 0).to(X.dtype).T.unsqueeze(-1) * X.unsqueeze(0)) / len(X)  # L x M x d
    design = basis.permute(0, 2, 1).reshape(-1, len(X))
    # driver pinned: torch's CPU default (gelsy) reads an uninitialised pivot array (pytorch#187411), so its rounding
    # depends on heap contents; gels (QR, no pivoting) is deterministic, CUDA's driver too, and the design is full rank
    return torch.linalg.lstsq(design, target.reshape(-1, 1), driver="gels").solution.squeeze(1)


def match_gradient(W0: Tensor, target: Tensor, X: Tensor, schedule: Schedule,
                   temperature: float) -> tuple[Tensor, Tensor, list[float]]:
    """Phase-1 set: minimise ||G_S(W_0) - target||_F^2 / ||target||_F^2 from inputs X and their best labels."""
    scale = target.pow(2).sum()

    def loss(Xs: Tensor, ys: Tensor, _: int) -> Tensor:
        return (surrogate_correlation(W0, Xs, ys, temperature) - target).pow(2).sum() / scale

    return _adam(X, best_labels(W0, target, X), loss, schedule)


def match_performance(W1: Tensor, b: Tensor, lam: float, real: tuple[Tensor, Tensor], X: Tensor, y: Tensor,
                      schedule: Schedule, batch: int, gen: torch.Generator) -> tuple[Tensor, Tensor, list[float]]:
    """Phase-2 set: minimise the real-batch loss of the ridge second layer a(S) from the start (X, y)."""
    X_real, y_real = real

    def loss(Xs: Tensor, ys: Tensor, _: int) -> Tensor:
        idx = torch.randint(len(y_real), (batch,), generator=gen).to(X_real.device)
        a = ridge(features(W1, b, Xs), ys, lam)
        return (features(W1, b, X_real[idx]) @ a - y_real[idx]).pow(2).mean()

    return _adam(X, y, loss, schedule)
