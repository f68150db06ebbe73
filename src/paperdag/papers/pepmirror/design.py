"""Designs on every held-out target and on its mirror image, with shared (mirrored) noise.

For target k the sampler draws z ~ N(0, I) from a generator seeded by (seed, training seed, k) only, so both
variants and both hands of the target see the same draws (a paired comparison). Hand L samples on the pocket as
given; hand D samples on the mirrored pocket P x with mirrored noise P z, P = diag(-1, 1, 1). A reflection-equivariant denoiser therefore
gives exactly P (its L design) on the mirrored target; only a reflection-sensitive one can keep the requested hand.
"""

from __future__ import annotations

import numpy as np
import torch

from .batches import MAX_LEN, to_arrays, to_torch
from .diffusion import cosine_alpha_bar, ddpm_sample
from .geometry import MIRROR
from .model import Denoiser
from .params import DenoiserParams, DesignParams
from .refine import refine


def design_noise(seed: int, train_seed: int, target: int, n_samples: int, steps: int) -> torch.Tensor:
    """Noise [T+1, n, 12, 4, 3] of one target, a function of (seed, training seed, target index) only."""
    g = torch.Generator().manual_seed(int(np.random.SeedSequence([seed, train_seed, target]).generate_state(1)[0]))
    return torch.randn(steps + 1, n_samples, MAX_LEN, 4, 3, generator=g, dtype=torch.float64)


def design_targets(model: Denoiser, targets: list[dict], arch: DenoiserParams, p: DesignParams, pocket_max: int,
                   seed: int, train_seed: int, device: str, version: str) -> list[dict]:
    """For each target: n_samples designs on the L target and, with mirrored noise P z, on its mirror image, each
    sampled (xyz_raw) and refined (xyz, see refine.py). Rows hold coordinates in the target's own frame (hand D =
    the mirror about the pocket centroid)."""
    alpha_bar = cosine_alpha_bar(arch.diffusion_steps)
    P = torch.as_tensor(MIRROR)
    out = []
    for k, target in enumerate(targets):
        arr = to_arrays([target] * p.n_samples, pocket_max)
        noise = design_noise(seed, train_seed, k, p.n_samples, arch.diffusion_steps)
        for hand in ("L", "D"):
            a = dict(arr)
            z = noise
            if hand == "D":
                a["pocket_x"] = arr["pocket_x"] @ MIRROR.T
                z = noise @ P.T
            batch = to_torch(a, np.arange(p.n_samples), device)
            raw = ddpm_sample(model, batch, alpha_bar, arch.coord_scale, z.to(device=device, dtype=torch.float32))
            raw = raw.double().cpu()
            xyz = refine(raw, batch["pep_mask"].cpu(), batch["pocket_x"].cpu(), batch["pocket_mask"].cpu(),
                         iters=p.refine_iters).numpy()
            raw = raw.numpy() + arr["center"][:, None, None]
            xyz = xyz + arr["center"][:, None, None]
            L = target["length"]
            for s in range(p.n_samples):
                out.append({"train_seed": train_seed, "target_id": target["id"], "target_index": k,
                            "target_hand": hand, "sample": s, "length": L, "xyz": xyz[s, :L].reshape(-1).tolist(),
                            "xyz_raw": raw[s, :L].reshape(-1).tolist(), "model_version": version})
    return out
