"""The annotated dataset: imperfect captioned scenes, the detector trained on clean renders, every reward of every
training image and its quantile bin, and held-out evaluation captions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .detector import Detector, fit_detector, geneval
from .params import DataParams, RewardParams
from .rewards import REWARDS, all_rewards, bin_edges, quantile_bin
from .scenes import CORRUPTIONS, Corruption, corrupt, render, sample_captions


@dataclass(frozen=True)
class Annotated:
    """Images (n x 3 x 16 x 16, [0, 1]), captions (n x 5), corruption flags (n x 4), raw rewards and bins (n x R),
    evaluation prompts (P x 5), the detector and its held-out clean-render accuracy per check."""

    images: np.ndarray
    tokens: np.ndarray
    flags: np.ndarray
    rewards: np.ndarray
    bins: np.ndarray
    prompts: np.ndarray
    detector: Detector
    detector_acc: dict[str, float]


def build(d: DataParams, r: RewardParams, rng: np.random.Generator, device: str) -> Annotated:
    """Draw the scenes, corrupt them, train the detector on fresh clean renders, annotate and bin the rewards."""
    tokens = sample_captions(rng, d.n_train)
    spec = Corruption({"mismatch": d.p_mismatch, "blur": d.p_blur, "noise": d.p_noise, "dull": d.p_dull},
                      d.blur_sigma, d.noise_std, d.contrast, d.desaturate)
    images, captions, flags = corrupt(render(tokens, rng), tokens, spec, rng)
    clean_tokens = sample_captions(rng, d.n_clean + d.n_clean_test)
    clean = torch.as_tensor(render(clean_tokens, rng), dtype=torch.float32, device=device)
    gen = torch.Generator(device=device).manual_seed(int(rng.integers(2**31)))
    det = fit_detector(clean[: d.n_clean], clean_tokens[: d.n_clean], r.detector_steps, r.detector_batch,
                       r.detector_lr, gen)
    checks = geneval(det, clean[d.n_clean :], clean_tokens[d.n_clean :])
    x = torch.as_tensor(images, dtype=torch.float32, device=device)
    raw = np.concatenate([all_rewards(det, x[i : i + 2048], captions[i : i + 2048], r.min_pixels).cpu().numpy()
                          for i in range(0, len(x), 2048)])
    bins = np.stack([quantile_bin(raw[:, j], bin_edges(raw[:, j], r.n_bins)) for j in range(len(REWARDS))], 1)
    return Annotated(images.astype(np.float32), captions, flags, raw.astype(np.float32), bins.astype(np.float32),
                     sample_captions(rng, d.n_prompts), det, {k: float(v.float().mean()) for k, v in checks.items()})


def reward_gaps(a: Annotated) -> dict[str, float]:
    """Sanity of each reward model: mean reward of clean-on-that-axis rows minus flagged rows, for the reward that
    targets each corruption (alignment: mismatch, sharpness: blur, noise: noise, aesthetic: dull). Positive = the
    reward ranks the imperfect pairs lower."""
    target = {"mismatch": "alignment", "blur": "sharpness", "noise": "noise", "dull": "aesthetic"}
    out = {}
    for k, kind in enumerate(CORRUPTIONS):
        j = REWARDS.index(target[kind])
        flagged = a.flags[:, k]
        out[f"{target[kind]}_gap_{kind}"] = float(a.rewards[~flagged, j].mean() - a.rewards[flagged, j].mean())
    out["composition_gap_mismatch"] = float(a.rewards[~a.flags[:, 0], 1].mean() - a.rewards[a.flags[:, 0], 1].mean())
    return out
