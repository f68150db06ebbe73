"""DUNE's colour branch: one RGB offset c_k per class, optimised without gradients against the ensemble.

c_k = argmin_{c in [-a, a]^3} (1/|S_k|) sum_{i in S_k} (1/M) sum_m CE(f_m(clip(x_i + c)), y'_k)
      + P(c),   P(c) = penalty * (max(0, psnr_min - min_i PSNR_i) + max(0, ssim_min - min_i SSIM_i)),
over a sample S_k of class k, by differential evolution (scipy; Storn & Price 1997), vectorised over the population.
The optimum is then shrunk along the ray t c_k, t in {1, r, r^2, ...}, until every image of class k meets
PSNR >= psnr_min and SSIM >= ssim_min (quality.py), so the quality budget holds on every image, not a sample.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from scipy.optimize import differential_evolution
from torch import nn
from torch.nn import functional as F

from .quality import psnr, ssim

PENALTY = 10.0
SHRINK = 0.9


def apply_offsets(x: torch.Tensor, y: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """clip(x_i + c_{y_i}, 0, 1)."""
    return (x + offsets[y][:, :, None, None]).clamp(0.0, 1.0)


def _quality_ok(x: torch.Tensor, c: torch.Tensor, psnr_min: float, ssim_min: float) -> bool:
    moved = (x + c[None, :, None, None]).clamp(0.0, 1.0)
    return bool((psnr(x, moved) >= psnr_min).all() and (ssim(x, moved) >= ssim_min).all())


@torch.no_grad()
def class_offset(models: Sequence[nn.Module], x: torch.Tensor, target: int, bound: float, psnr_min: float,
                 ssim_min: float, popsize: int, generations: int, seed: int) -> torch.Tensor:
    """The offset c of one class (images x, all of them meeting the budget after the final shrink)."""
    def objective(pop: np.ndarray) -> np.ndarray:  # pop: [3, S] -> [S]
        c = torch.as_tensor(pop.T, dtype=x.dtype, device=x.device)
        moved = (x[None] + c[:, None, :, None, None]).clamp(0.0, 1.0)  # [S, n, 3, H, W]
        flat = moved.flatten(0, 1)
        t = torch.full((len(flat),), target, device=x.device)
        ce = torch.stack([F.cross_entropy(m(flat), t, reduction="none") for m in models]).mean(0)
        ref = x.repeat(len(c), 1, 1, 1)
        q_psnr, q_ssim = psnr(ref, flat).view(len(c), -1), ssim(ref, flat).view(len(c), -1)
        pen = (psnr_min - q_psnr.min(1).values).clamp(min=0) + (ssim_min - q_ssim.min(1).values).clamp(min=0)
        return (ce.view(len(c), -1).mean(1) + PENALTY * pen).cpu().numpy()

    result = differential_evolution(objective, [(-bound, bound)] * 3, popsize=popsize, maxiter=generations,
                                    seed=seed, vectorized=True, updating="deferred", polish=False, tol=0.0)
    return torch.as_tensor(result.x, dtype=x.dtype, device=x.device)


def shrink_to_budget(x: torch.Tensor, c: torch.Tensor, psnr_min: float, ssim_min: float) -> torch.Tensor:
    """The largest t c, t = SHRINK^j, j = 0, 1, ..., with every image of x meeting the quality budget (t -> 0 meets
    it in the limit: PSNR -> inf, SSIM -> 1)."""
    while not _quality_ok(x, c, psnr_min, ssim_min):
        c = c * SHRINK
        if c.abs().max() < 1e-4:
            return torch.zeros_like(c)
    return c


def colour_offsets(models: Sequence[nn.Module], x: torch.Tensor, y: torch.Tensor, targets: torch.Tensor,
                   classes: int, bound: float, psnr_min: float, ssim_min: float, popsize: int, generations: int,
                   sample: int, rng: np.random.Generator) -> torch.Tensor:
    """[K, 3] offsets: per class k, DE on a random sample of ``sample`` images toward target y'_k, then the shrink
    over all images of class k."""
    offsets = torch.zeros(classes, 3, dtype=x.dtype, device=x.device)
    for k in range(classes):
        idx = torch.nonzero(y == k).flatten()
        if len(idx) == 0:
            continue
        pick = idx[torch.as_tensor(rng.permutation(len(idx))[:sample], device=x.device)]
        c = class_offset(models, x[pick], int(targets[idx[0]]), bound, psnr_min, ssim_min, popsize, generations,
                         int(rng.integers(2**31)))
        offsets[k] = shrink_to_budget(x[idx], c, psnr_min, ssim_min)
    return offsets
