"""Coordinate-space DDPM (Ho et al. 2020) over the peptide's N, CA, C, CB coordinates given a fixed pocket.

The diffusion state of residue i is [CA_i / coord_scale, (N_i - CA_i) / OFFSET_SCALE, (C_i - CA_i) / OFFSET_SCALE,
(CB_i - CA_i) / OFFSET_SCALE] with coordinates centred on the pocket's CA centroid: a linear map that commutes
with every orthogonal transform, so equivariance is kept while the 1.5 A bond vectors (which carry the hand) are
as large as the noise at every step. Cosine schedule
(Nichol & Dhariwal 2021). Because the prior N(0, I) and every step are E(3)-equivariant when the denoiser is, a
polar model maps mirrored pocket + mirrored noise to the exact mirror image of its design.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from paperdag.papers.pepmirror.model import Denoiser

OFFSET_SCALE = 1.5  # A per unit for the intra-residue N, C, CB offsets


def to_state(x: Tensor, scale: float) -> Tensor:
    """Atoms [.., 4, 3] (N, CA, C, CB in A) -> state [.., 4, 3] = [CA / scale, (N, C, CB - CA) / OFFSET_SCALE]."""
    ca = x[..., 1:2, :]
    return torch.cat([ca / scale, (x[..., [0, 2, 3], :] - ca) / OFFSET_SCALE], -2)


def from_state(s: Tensor, scale: float) -> Tensor:
    """Inverse of to_state: state -> atoms (N, CA, C, CB) in A."""
    ca = s[..., :1, :] * scale
    off = s[..., 1:, :] * OFFSET_SCALE + ca
    return torch.cat([off[..., :1, :], ca, off[..., 1:, :]], -2)


def cosine_alpha_bar(steps: int) -> Tensor:
    """alpha_bar_t = cos^2(((t/T + s) / (1 + s)) pi/2) / alpha_bar_0, s = 0.008, for t = 0..T (float64)."""
    s = 0.008
    t = torch.arange(steps + 1, dtype=torch.float64) / steps
    f = torch.cos((t + s) / (1 + s) * math.pi / 2) ** 2
    return (f / f[0]).clamp(min=1e-5)


def ddpm_loss(model: Denoiser, batch: dict[str, Tensor], alpha_bar: Tensor, scale: float,
              generator: torch.Generator | None = None) -> Tensor:
    """E_{t, eps} || eps - eps_theta(sqrt(ab_t) x0 + sqrt(1 - ab_t) eps, t) ||^2 over real peptide atoms."""
    x0 = to_state(batch["pep_x"], scale)
    B = x0.shape[0]
    T = alpha_bar.shape[0] - 1
    t = torch.randint(1, T + 1, (B,), generator=generator, device=x0.device)
    ab = alpha_bar.to(x0)[t][:, None, None, None]
    mask = batch["pep_mask"][..., None, None]
    eps = torch.randn(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype) * mask
    xt = ab.sqrt() * x0 + (1 - ab).sqrt() * eps
    pred = model(from_state(xt, scale), batch["pep_mask"], batch["pos_feat"], t.to(x0) / T, batch["pocket_x"],
                 batch["pocket_aa"], batch["pocket_mask"])
    return ((pred - eps) ** 2 * mask).sum() / (mask.sum() * 12)


@torch.no_grad()
def ddpm_sample(model: Denoiser, batch: dict[str, Tensor], alpha_bar: Tensor, scale: float, noise: Tensor) -> Tensor:
    """Ancestral sampling x_{t-1} = (x_t - beta_t / sqrt(1 - ab_t) eps_theta) / sqrt(alpha_t) + sigma_t z_t,
    sigma_t^2 = beta_t (1 - ab_{t-1}) / (1 - ab_t); noise [T+1, B, P, 4, 3] holds x_T and every z_t so that a
    caller can mirror it. Returns peptide coordinates in A, [B, P, 4, 3]."""
    T = alpha_bar.shape[0] - 1
    mask = batch["pep_mask"][..., None, None]
    ab = alpha_bar.to(noise)
    x = noise[T] * mask
    B = x.shape[0]
    for t in range(T, 0, -1):
        a_t = ab[t] / ab[t - 1]
        tt = torch.full((B,), t / T, dtype=x.dtype, device=x.device)
        eps = model(from_state(x, scale), batch["pep_mask"], batch["pos_feat"], tt, batch["pocket_x"], batch["pocket_aa"],
                    batch["pocket_mask"])
        x = (x - (1 - a_t) / (1 - ab[t]).sqrt() * eps) / a_t.sqrt()
        if t > 1:
            sigma = ((1 - a_t) * (1 - ab[t - 1]) / (1 - ab[t])).sqrt()
            x = x + sigma * noise[t - 1] * mask
    return from_state(x, scale) * mask
