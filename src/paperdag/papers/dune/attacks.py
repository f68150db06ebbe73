"""Projected gradient descent in an L_inf ball, against an ensemble (Madry et al. 2018).

With ensemble {f_m}, m = 1..M, the loss is L(x') = (1/M) sum_m CE(f_m(x'), t). One step is
x' <- Proj_{B_inf(x, eps) cap [0,1]^d}(x' -/+ alpha sign(grad L(x'))), descending when ``minimise`` (error-minimising
noise, toward targets t) and ascending otherwise (adversarial examples for adversarial training).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F


def ensemble_loss(models: Sequence[nn.Module], x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """(1/M) sum_m mean_i CE(f_m(x_i), t_i)."""
    return torch.stack([F.cross_entropy(m(x), t) for m in models]).mean()


def project(x_adv: torch.Tensor, x: torch.Tensor, eps: float) -> torch.Tensor:
    """Euclidean projection onto {x' : ||x' - x||_inf <= eps, 0 <= x' <= 1} (clip per coordinate)."""
    return torch.minimum(torch.maximum(x_adv, x - eps), x + eps).clamp(0.0, 1.0)


def pgd(models: Sequence[nn.Module], x: torch.Tensor, t: torch.Tensor, eps: float, alpha: float, steps: int,
        minimise: bool, generator: torch.Generator | None = None) -> torch.Tensor:
    """``steps`` signed-gradient steps of size alpha from a uniform random start in the ball, each projected."""
    noise = torch.rand(x.shape, generator=generator, device="cpu").to(x.device) * 2 - 1
    x_adv = project(x + eps * noise, x, eps)
    sign = -1.0 if minimise else 1.0
    for _ in range(steps):
        x_adv.requires_grad_(True)
        grad, = torch.autograd.grad(ensemble_loss(models, x_adv, t), x_adv)
        x_adv = project(x_adv.detach() + sign * alpha * grad.sign(), x, eps)
    return x_adv.detach()
