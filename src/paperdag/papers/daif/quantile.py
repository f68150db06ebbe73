"""Quantile regression of return distributions (QR-DQN, Dabney, Rowland, Bellemare & Munos 2018, AAAI).

K quantile estimates theta_1..K at midpoints tau_i = (2 i - 1) / (2 K). For target samples T_j the loss is
    L = sum_i mean_j rho^kappa_{tau_i}(T_j - theta_i),   rho^kappa_tau(u) = |tau - 1{u < 0}| H_kappa(u) / kappa,
with the Huber function H_kappa(u) = u^2 / 2 if |u| <= kappa else kappa (|u| - kappa / 2); kappa = 0 is the plain
pinball loss rho_tau(u) = u (tau - 1{u < 0}), whose expected gradient in theta_i is F(theta_i) - tau_i, zero exactly
at the tau_i-quantile of the target distribution F.
"""

from __future__ import annotations

import torch


def midpoints(k: int, device: str | torch.device = "cpu") -> torch.Tensor:
    """tau_i = (2 i - 1) / (2 K), i = 1..K."""
    return (2 * torch.arange(k, device=device, dtype=torch.float32) + 1) / (2 * k)


def quantile_huber_loss(theta: torch.Tensor, target: torch.Tensor, kappa: float) -> torch.Tensor:
    """Per-row loss sum_i mean_j rho^kappa_{tau_i}(T_j - theta_i); theta: [..., K], target: [..., J] -> [...]."""
    tau = midpoints(theta.shape[-1], theta.device).to(theta.dtype)
    u = target.unsqueeze(-2) - theta.unsqueeze(-1)  # [..., K, J]
    weight = (tau.unsqueeze(-1) - (u.detach() < 0).to(u.dtype)).abs()
    if kappa > 0:
        huber = torch.where(u.abs() <= kappa, 0.5 * u**2, kappa * (u.abs() - 0.5 * kappa)) / kappa
    else:
        huber = u.abs()
    return (weight * huber).mean(-1).sum(-1)
