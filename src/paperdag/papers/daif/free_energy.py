"""Expected free energy from a Bayesian distributional critic alone (no transition model).

The critic's posterior over the K return quantiles of Z(s, a) is represented by M ensemble members theta_mk(s, a).
With log-preferences over outcomes proportional to reward, the expected free energy of action a splits into a
pragmatic and an epistemic part (Friston et al. 2015, "Active inference and epistemic value"):
    G(s, a) = -E_q[Z(s, a)] - lambda IG(s, a),      a_t = argmin_a G(s_t, a),
    E_q[Z(s, a)] = (1 / M K) sum_mk theta_mk(s, a)                                   (pragmatic value)
    IG(s, a) = (1 / 2K) sum_k log(1 + v_k(s, a) / (sigma_ale^2(s, a) + sigma_0^2))     (information gain)
with v_k = Var_m theta_mk the epistemic variance of quantile k and sigma_ale^2 = mean_m Var_k theta_mk the
aleatoric variance of the return itself. IG is the mutual information I(theta_k; y) between a Gaussian belief
N(., v_k) about quantile k and one observation y of it with noise sigma_ale^2 + sigma_0^2, averaged over quantiles:
it is large where members disagree relative to the return's intrinsic spread and vanishes as data pins the
posterior down. Because each member bootstraps from its own target network, downstream disagreement propagates
back into v_k, which gives deep (multi-step) exploration. lambda = 0 is the greedy posterior-mean agent.
"""

from __future__ import annotations

import torch


def pragmatic_value(z: torch.Tensor) -> torch.Tensor:
    """E_q[Z(s, a)] = mean over members and quantiles; z: [..., M, A, K] -> [..., A]."""
    return z.mean(dim=(-3, -1))


def variance(z: torch.Tensor, dim: int) -> torch.Tensor:
    """Population variance mean((z - mean z)^2) along ``dim``, accumulated in float64 as torch.var does (two passes
    here: torch's Welford reduction is slow across the small strided dimensions of an ensemble)."""
    x = z.double()
    return (x - x.mean(dim, keepdim=True)).square().mean(dim).to(z.dtype)


def information_gain(z: torch.Tensor, noise_floor: float) -> torch.Tensor:
    """IG(s, a) = (1 / 2K) sum_k log(1 + Var_m theta_mk / (mean_m Var_k theta_mk + sigma_0^2)); [..., M, A, K] ->
    [..., A] (zero for a single member)."""
    if z.shape[-3] < 2:
        return torch.zeros(z.shape[:-3] + z.shape[-2:-1], dtype=z.dtype, device=z.device)
    epistemic = variance(z, -3)  # [..., A, K]
    aleatoric = variance(z, -1).mean(dim=-2) if z.shape[-1] > 1 else torch.zeros_like(epistemic[..., 0])
    return 0.5 * torch.log1p(epistemic / (aleatoric.unsqueeze(-1) + noise_floor)).mean(dim=-1)


def expected_free_energy(z: torch.Tensor, lam: float, noise_floor: float) -> torch.Tensor:
    """G(s, a) = -E_q[Z(s, a)] - lambda IG(s, a); [..., M, A, K] -> [..., A]."""
    g = -pragmatic_value(z)
    if lam > 0:
        g = g - lam * information_gain(z, noise_floor)
    return g
