"""Two-layer ReLU network f(x) = sum_j a_j relu(w_j . x + b_j) of width L and its two-phase training algorithm.

The algorithm of the one-step feature-learning analyses (Damian, Lee & Soltanolkotabi 2022, COLT, "Neural networks
can learn representations with gradient descent", Alg. 1; Ba et al. 2022, NeurIPS, "High-dimensional asymptotics of
feature learning"), on a training set S = {(x_i, y_i)}:
  init   (symmetric): w_j ~ Unif(S^{d-1}) and a_j = +1 for j < L/2, w_{j+L/2} = w_j and a_{j+L/2} = -1, b = 0,
         so f_0 = 0; phase-2 biases b_j ~ N(0, bias_std^2) are drawn with the initialisation.
  phase 1: one gradient step on W of the loss (1/2|S|) sum_i (f(x_i) - y_i)^2 with weight decay 1/eta, which
         cancels W_0:   W_1 = -eta grad_W = eta diag(a) G_S(W_0),   G_S(W)_j = (1/|S|) sum_i y_i 1{w_j . x_i > 0} x_i,
         with eta = step * sqrt(pi d) (population rows then have norm ~ step).
  phase 2: ridge regression of the second layer on the features phi(x) = relu(W_1 x + b):
         a = argmin_a (1/m) ||Phi a - y||^2 + lam ||a||^2 = (Phi^T Phi + m lam I)^-1 Phi^T y
           = Phi^T (Phi Phi^T + m lam I)^-1 y                          (push-through identity, used when m < L).
Population phase-1 gradient for y = x^T A x - tr A (Gaussian x, unit w_hat = w / ||w||), by Stein's lemma:
    E[y 1{w . x > 0} x] = (2 A w_hat - (w_hat^T A w_hat) w_hat) / sqrt(2 pi),
whose only component outside span(U) is the small -(w_hat^T A w_hat) P_perp w_hat / sqrt(2 pi) term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class Init:
    """A symmetric initialisation: first layer W0 (L x d), second layer a (L), phase-2 biases b (L)."""

    W0: Tensor
    a: Tensor
    b: Tensor


def symmetric_init(gen: torch.Generator, d: int, width: int, bias_std: float, dtype: torch.dtype = torch.float64,
                   device: str = "cpu") -> Init:
    """w_j uniform on the sphere, duplicated with opposite a_j = +-1 (f_0 = 0); b_j ~ N(0, bias_std^2)."""
    half = width // 2
    W = torch.randn(half, d, generator=gen, dtype=dtype)
    W = W / W.norm(dim=1, keepdim=True)
    a = torch.cat([torch.ones(half, dtype=dtype), -torch.ones(half, dtype=dtype)])
    b = bias_std * torch.randn(width, generator=gen, dtype=dtype)
    return Init(torch.cat([W, W]).to(device), a.to(device), b.to(device))


def correlation(W: Tensor, X: Tensor, y: Tensor) -> Tensor:
    """G_S(W) = (1/|S|) sum_i y_i 1{W x_i > 0} x_i^T (L x d): minus the phase-1 gradient, up to diag(a)."""
    return ((X @ W.T > 0).to(X.dtype) * y.unsqueeze(1)).T @ X / len(y)


def population_correlation(W: Tensor, A: Tensor) -> Tensor:
    """E[y 1{W x > 0} x^T] for y = x^T A x - tr A: rows (2 A w_hat - (w_hat^T A w_hat) w_hat) / sqrt(2 pi)."""
    W_hat = W / W.norm(dim=1, keepdim=True)
    AW = W_hat @ A
    return (2 * AW - (AW * W_hat).sum(1, keepdim=True) * W_hat) / math.sqrt(2 * math.pi)


def phase1(init: Init, X: Tensor, y: Tensor, step: float) -> Tensor:
    """W_1 = eta diag(a) G_S(W_0) with eta = step * sqrt(pi d): the one large step with weight decay 1/eta."""
    return step * math.sqrt(math.pi * X.shape[1]) * init.a.unsqueeze(1) * correlation(init.W0, X, y)


def features(W1: Tensor, b: Tensor, X: Tensor) -> Tensor:
    """Phi = relu(X W_1^T + b) (m x L)."""
    return torch.relu(X @ W1.T + b)


def ridge(Phi: Tensor, y: Tensor, lam: float) -> Tensor:
    """a = argmin (1/m) ||Phi a - y||^2 + lam ||a||^2, by the primal (m >= L) or dual (m < L) normal equations."""
    m, width = Phi.shape
    if m >= width:
        eye = torch.eye(width, dtype=Phi.dtype, device=Phi.device)
        return torch.linalg.solve(Phi.T @ Phi + m * lam * eye, Phi.T @ y)
    eye = torch.eye(m, dtype=Phi.dtype, device=Phi.device)
    return Phi.T @ torch.linalg.solve(Phi @ Phi.T + m * lam * eye, y)


@dataclass(frozen=True)
class Network:
    """A trained network: first layer W1, biases b, second layer a."""

    W1: Tensor
    b: Tensor
    a: Tensor

    def __call__(self, X: Tensor) -> Tensor:
        return features(self.W1, self.b, X) @ self.a


def train(init: Init, phase1_set: tuple[Tensor, Tensor], phase2_set: tuple[Tensor, Tensor], step: float,
          lam: float) -> Network:
    """The two-phase algorithm: W_1 from ``phase1_set`` (X, y), then the ridge second layer on ``phase2_set``."""
    W1 = phase1(init, *phase1_set, step)
    X2, y2 = phase2_set
    return Network(W1, init.b, ridge(features(W1, init.b, X2), y2, lam))


def relative_error(net: Network, X: Tensor, y: Tensor) -> float:
    """Test error mean (f(x) - y)^2 / mean (y - mean y)^2: 1 for the best constant predictor."""
    return float(((net(X) - y) ** 2).mean() / y.var(unbiased=False))
