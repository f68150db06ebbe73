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
from collections.abc import Callable, Iterable

import numpy as np
import torch
from torch import Tensor

from .batches import to_torch
from .model import Denoiser
from .params import TrainingParams

OFFSET_SCALE = 1.5  # A per unit for the intra-residue N, C, CB offsets
X0_MAX_NORM = 4.0  # x0 estimates clipped to 4 units (CA within 4 coord_scale of the pocket centre; offsets 6 A)


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
    """alpha_bar_t = prod_{s<=t} (1 - beta_s), beta_t = min(1 - f(t)/f(t-1), 0.999), f(t) = cos^2(((t/T + 0.008) /
    1.008) pi/2), for t = 0..T (float64)."""
    t = torch.arange(steps + 1, dtype=torch.float64) / steps
    f = torch.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2
    beta = (1 - f[1:] / f[:-1]).clamp(max=0.999)
    return torch.cat([torch.ones(1, dtype=torch.float64), torch.cumprod(1 - beta, 0)])


def clip_norm(v: Tensor, max_norm: float) -> Tensor:
    """v * min(1, max_norm / |v|) per 3-vector: bounds x0 estimates while commuting with rotations/reflections."""
    return v * (max_norm / v.norm(dim=-1, keepdim=True).clamp(min=max_norm))


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


def fit_denoiser(model: Denoiser, train: dict[str, np.ndarray], alpha_bar: Tensor, scale: float, p: TrainingParams,
                 rng: np.random.Generator, device: str, log: Callable[[str, float, int], None],
                 progress: Callable[[Iterable[int]], Iterable[int]],
                 generator: torch.Generator | None = None) -> list[float]:
    """Adam on ``ddpm_loss`` over minibatches of the padded training arrays, gradients clipped to norm 1, learning
    rate lr_s = lr (0.1 + 0.9 (1 + cos(pi s / steps)) / 2); returns the loss of every step and logs the 10-step mean
    as ``train_loss`` every 10 steps. Minibatches are drawn from ``rng``, the loss's t and noise from ``generator``."""
    opt = torch.optim.Adam(model.parameters(), lr=p.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * s / p.steps)))
    n_train = len(train["pep_mask"])
    losses = []
    for step in progress(range(p.steps)):
        batch = to_torch(train, rng.integers(n_train, size=p.batch_size), device)
        loss = ddpm_loss(model, batch, alpha_bar, scale, generator)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if step % 10 == 0:
            log("train_loss", float(np.mean(losses[-10:])), step)
    return losses


@torch.no_grad()
def ddpm_sample(model: Denoiser, batch: dict[str, Tensor], alpha_bar: Tensor, scale: float, noise: Tensor) -> Tensor:
    """Ancestral sampling with the DDPM posterior q(x_{t-1} | x_t, x0_hat):
    x0_hat = clip((x_t - sqrt(1 - ab_t) eps_theta) / sqrt(ab_t)),
    x_{t-1} = sqrt(ab_{t-1}) beta_t / (1 - ab_t) x0_hat + sqrt(alpha_t) (1 - ab_{t-1}) / (1 - ab_t) x_t + sigma_t z_t,
    sigma_t^2 = beta_t (1 - ab_{t-1}) / (1 - ab_t). noise [T+1, B, P, 4, 3] holds x_T and every z_t so that a
    caller can mirror it. Returns peptide coordinates in A, [B, P, 4, 3]."""
    T = alpha_bar.shape[0] - 1
    mask = batch["pep_mask"][..., None, None]
    ab = alpha_bar.to(noise)
    x = noise[T] * mask
    B = x.shape[0]
    for t in range(T, 0, -1):
        a_t = ab[t] / ab[t - 1]
        tt = torch.full((B,), t / T, dtype=x.dtype, device=x.device)
        eps = model(from_state(x, scale), batch["pep_mask"], batch["pos_feat"], tt, batch["pocket_x"],
                    batch["pocket_aa"], batch["pocket_mask"])
        x0 = clip_norm((x - (1 - ab[t]).sqrt() * eps) / ab[t].sqrt(), X0_MAX_NORM)
        x = (ab[t - 1].sqrt() * (1 - a_t) * x0 + a_t.sqrt() * (1 - ab[t - 1]) * x) / (1 - ab[t])
        if t > 1:
            sigma = ((1 - a_t) * (1 - ab[t - 1]) / (1 - ab[t])).sqrt()
            x = x + sigma * noise[t - 1] * mask
    return from_state(x, scale) * mask
