"""The annotated dataset: imperfect captioned scenes, the reward detector and the evaluator (trained on disjoint clean
renders), every reward of every training image and its quantile bin, the rewards' sanity on held-out renders, and
held-out evaluation captions."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from .detector import Detector, fit_detector, geneval
from .params import DataParams, RewardParams
from .rewards import REWARDS, all_rewards, bin_edges, quantile_bin
from .scenes import CORRUPTIONS, Corruption, corrupt, render, sample_captions


@dataclass(frozen=True)
class Annotated:
    """Images (n x 3 x 16 x 16, [0, 1]), captions (n x 5), corruption flags (n x 4), raw rewards and bins (n x R),
    evaluation prompts (P x 5); the reward detector and the evaluator (a second detector trained on disjoint
    renders), each with its held-out clean-render accuracy per check; ``sanity``: the rewards of the held-out clean
    renders and of the same renders with each corruption alone ((1 + len(CORRUPTIONS)) x n_test x R)."""

    images: np.ndarray
    tokens: np.ndarray
    flags: np.ndarray
    rewards: np.ndarray
    bins: np.ndarray
    prompts: np.ndarray
    detector: Detector
    evaluator: Detector
    accuracy: dict[str, dict[str, float]]
    sanity: np.ndarray


def _rewards(det: Detector, images: np.ndarray, captions: np.ndarray, min_pixels: int, device: str) -> np.ndarray:
    x = torch.as_tensor(images, dtype=torch.float32, device=device)
    return np.concatenate([all_rewards(det, x[i : i + 2048], captions[i : i + 2048], min_pixels).cpu().numpy()
                           for i in range(0, len(x), 2048)])


def build(d: DataParams, r: RewardParams, rng: np.random.Generator, device: str) -> Annotated:
    """Draw the scenes and corrupt them; train the reward detector and the evaluator on two disjoint sets of fresh
    clean renders; annotate and bin the rewards; score the held-out clean renders with each corruption alone."""
    tokens = sample_captions(rng, d.n_train)
    spec = Corruption({"mismatch": d.p_mismatch, "blur": d.p_blur, "noise": d.p_noise, "dull": d.p_dull},
                      d.blur_sigma, d.noise_std, d.contrast, d.desaturate)
    images, captions, flags = corrupt(render(tokens, rng), tokens, spec, rng)
    clean_tokens = sample_captions(rng, 2 * d.n_clean + d.n_clean_test)
    clean_np = render(clean_tokens, rng)
    clean = torch.as_tensor(clean_np, dtype=torch.float32, device=device)
    test = slice(2 * d.n_clean, None)
    nets, accuracy = [], {}
    for name, part in (("detector", slice(0, d.n_clean)), ("evaluator", slice(d.n_clean, 2 * d.n_clean))):
        gen = torch.Generator(device=device).manual_seed(int(rng.integers(2**31)))
        nets.append(fit_detector(clean[part], clean_tokens[part], r.detector_steps, r.detector_batch,
                                 r.detector_lr, gen))
        accuracy[name] = {k: float(v.float().mean()) for k, v in geneval(nets[-1], clean[test],
                                                                          clean_tokens[test]).items()}
    det, evaluator = nets
    raw = _rewards(det, images, captions, r.min_pixels, device)
    bins = np.stack([quantile_bin(raw[:, j], bin_edges(raw[:, j], r.n_bins)) for j in range(len(REWARDS))], 1)
    variants = [(clean_np[test], clean_tokens[test])]
    for kind in CORRUPTIONS:
        alone = replace(spec, p={k: float(k == kind) for k in CORRUPTIONS})
        variants.append(corrupt(clean_np[test], clean_tokens[test], alone, rng)[:2])
    sanity = np.stack([_rewards(det, x, t, r.min_pixels, device) for x, t in variants])
    return Annotated(images.astype(np.float32), captions, flags, raw.astype(np.float32), bins.astype(np.float32),
                     sample_captions(rng, d.n_prompts), det, evaluator, accuracy, sanity.astype(np.float32))
