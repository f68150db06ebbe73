"""The trust region over the whole diffusion chain (TruDi) and its final-step-only ablation.

Old and new chains share the prior and the fixed step variances, so by the chain rule of the KL divergence
    KL(p_old(a_{0:K} | s) || p_new(a_{0:K} | s)) = sum_t E_old || mu_old,t(a_t) - mu_new,t(a_t) ||^2 / (2 sigma_t^2),
and by the data-processing inequality it bounds the KL of the final actions, KL(p_old(a_0 | s) || p_new(a_0 | s)).
Per stored chain the sum is evaluated at the sampled a_t (an unbiased one-sample estimate of the expectation).

Enforcement is by projection of the step means (Otto et al. 2021, "Differentiable trust region layers", ICLR, for a
Gaussian with fixed covariance; here for the chain): per state, when the chain KL exceeds epsilon all step-mean
offsets are scaled jointly, mu_proj = mu_old + c (mu_new - mu_old), c = min(1, sqrt(epsilon / KL)), which makes the
projected chain's KL exactly min(KL, epsilon) because the KL is quadratic in the offsets. The final-step baseline
applies the same rule to the last step (t = 1) alone and leaves the other steps free.
"""

from __future__ import annotations

import torch


def chain_kl(mu_old: torch.Tensor, mu_new: torch.Tensor, sigmas: torch.Tensor) -> torch.Tensor:
    """Per-chain KL sum_k ||mu_old,k - mu_new,k||^2 / (2 sigma_k^2) for means [..., K, A] and sigmas [K]."""
    return (((mu_old - mu_new) ** 2).sum(-1) / (2 * sigmas**2)).sum(-1)


def project(mu_old: torch.Tensor, mu_new: torch.Tensor, sigmas: torch.Tensor, epsilon: float,
            final_only: bool = False) -> torch.Tensor:
    """mu_proj = mu_old + min(1, sqrt(epsilon / KL)) (mu_new - mu_old) over all steps, or over the last step only
    (means [..., K, A])."""
    steps = slice(-1, None) if final_only else slice(None)
    old, new = mu_old[..., steps, :], mu_new[..., steps, :]
    c = (epsilon / chain_kl(old, new, sigmas[steps]).clamp_min(1e-12)).sqrt().clamp(max=1.0)[..., None, None]
    proj = old + c * (new - old)
    return torch.cat([mu_new[..., :-1, :], proj], -2) if final_only else proj
