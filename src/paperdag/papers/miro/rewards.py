"""The reward models (no pretrained networks) and their quantile binning. Every reward is higher-is-better, and each
ranks every corruption it can see below the clean image (as the paper's human-preference rewards do; checked on
held-out renders by the ``*_ranks_corruptions_below_clean`` preconditions). With m = med(x) the 3 x 3 per-channel
median of the image (a denoiser that keeps step edges) and Y the luminance (mean of RGB):

  alignment   = mean_h p_det(attribute_h named by the caption | x), the reward detector's probability (detector.py);
  composition = (1/3)(a_A + a_B + [centroid order of A, B matches the relation]), a hand-written checker:
                a_c = min(1, n_c / area(shape_c)), n_c the pixels within TAU of palette colour c (TAU = half the
                smallest distance between palette entries, background included, so a pixel matches at most one
                colour); the order needs both colours present (n_c >= ``min_pixels``);
  sharpness   = Var(Lap * Y(m)), the variance of the 4-neighbour Laplacian of the denoised luminance;
  aesthetic   = std(Y(m)) + mean(max_c m - min_c m) - mean|x - m|: contrast plus saturation of the denoised image
                minus the grain the denoiser removed (all in pixel-intensity units);
  noise       = log(std(Y) + 1/255) - log(median|Lap * Y| + 1/255), a signal-to-noise ratio: the image's contrast
                against its robust noise level (flat regions of a clean render have Lap = 0), both floored at one
                8-bit step (finite for a constant image).
Quantile binning over the dataset: edges e = unique quantiles q_{k/K}, k = 1..K-1, of the reward;
bin(v) = #{e_k <= v} (edges above the minimum only), normalised by the number of distinct bins to [0, 1]
(monotone; the minimum is in bin 0 and the maximum in bin 1).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .detector import Detector, attribute_probs
from .scenes import BACKGROUND, COLOURS, SHAPES, SIZE, shape_mask

REWARDS = ("alignment", "composition", "sharpness", "aesthetic", "noise")
LAPLACE = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])
PALETTE = np.array([[BACKGROUND] * 3, *COLOURS.values()])
TAU = float(min(np.linalg.norm(a - b) for i, a in enumerate(PALETTE) for b in PALETTE[i + 1 :]) / 2)
AREA = torch.tensor([float(shape_mask(s, SIZE // 2, SIZE // 2).sum()) for s in range(len(SHAPES))])
EIGHT_BIT = 1 / 255


def median3(x: Tensor) -> Tensor:
    """The 3 x 3 median of each channel (edge pixels replicated), n x 3 x 16 x 16."""
    padded = torch.nn.functional.pad(x, (1, 1, 1, 1), mode="replicate")
    return padded.unfold(2, 3, 1).unfold(3, 3, 1).flatten(-2).median(-1).values


def laplacian(x: Tensor) -> Tensor:
    """Lap * Y (n x 14 x 14, valid convolution) of the luminance Y of images x (n x 3 x 16 x 16)."""
    y = x.mean(1, keepdim=True)
    return torch.nn.functional.conv2d(y, LAPLACE.to(x)[None, None])[:, 0]


def sharpness(x: Tensor) -> Tensor:
    """Var(Lap * Y(median3(x))) per image."""
    return laplacian(median3(x)).flatten(1).var(1)


def noise(x: Tensor) -> Tensor:
    """log(std(Y) + 1/255) - log(median |Lap * Y| + 1/255) per image."""
    signal = x.mean(1).flatten(1).std(1)
    return torch.log(signal + EIGHT_BIT) - torch.log(laplacian(x).abs().flatten(1).median(1).values + EIGHT_BIT)


def aesthetic(x: Tensor) -> Tensor:
    """std(Y(m)) + mean over pixels of (max_c m_c - min_c m_c) - mean |x - m|, m = median3(x)."""
    m = median3(x)
    colour = m.mean(1).flatten(1).std(1) + (m.max(1).values - m.min(1).values).flatten(1).mean(1)
    return colour - (x - m).abs().flatten(1).mean(1)


def composition(x: Tensor, tokens: np.ndarray, min_pixels: int) -> Tensor:
    """The hand-written checker of the module docstring, in [0, 1]."""
    palette = torch.as_tensor(PALETTE, dtype=x.dtype, device=x.device)
    dist = ((x[:, None] - palette[None, :, :, None, None]) ** 2).sum(2).sqrt()  # n x (1 + colours) x 16 x 16
    t = torch.as_tensor(np.asarray(tokens).reshape(-1, 5), device=x.device)
    grid = torch.arange(SIZE, dtype=x.dtype, device=x.device)
    area, score, present, centre = AREA.to(x), [], [], []
    for slot in (0, 3):
        mask = (dist.gather(1, t[:, slot, None, None, None].expand(-1, 1, SIZE, SIZE))[:, 0] < TAU).to(x.dtype)
        count = mask.flatten(1).sum(1)
        score.append((count / area[t[:, slot + 1] - 1]).clamp(max=1))
        present.append(count >= min_pixels)
        rows = (mask.sum(2) * grid).sum(1) / count.clamp(min=1)
        cols = (mask.sum(1) * grid).sum(1) / count.clamp(min=1)
        centre.append(torch.stack([rows, cols], 1))
    axis = (t[:, 2] >= 3).long()  # relation tokens 3, 4 (above, below) compare rows, 1, 2 compare columns
    d = (centre[1] - centre[0]).gather(1, (1 - axis)[:, None])[:, 0]  # B minus A along the relation axis
    a_first = (t[:, 2] == 1) | (t[:, 2] == 3)  # "left of", "above": A before B
    order = torch.where(a_first, d > 0, d < 0) & present[0] & present[1]
    return (score[0] + score[1] + order.to(x.dtype)) / 3


def alignment(det: Detector, x: Tensor, tokens: np.ndarray) -> Tensor:
    """Mean over the five canonical attributes of the detector's probability of the caption's attribute."""
    return attribute_probs(det, x, tokens).mean(1)


def all_rewards(det: Detector, x: Tensor, tokens: np.ndarray, min_pixels: int) -> Tensor:
    """Rewards (n x len(REWARDS)) in the order of REWARDS, images x in [0, 1] clamped first."""
    x = x.clamp(0, 1)
    cols = {"alignment": alignment(det, x, tokens), "composition": composition(x, tokens, min_pixels),
            "sharpness": sharpness(x), "aesthetic": aesthetic(x), "noise": noise(x)}
    return torch.stack([cols[r] for r in REWARDS], 1)


def bin_edges(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Unique inner quantiles q_{k/K}, k = 1..K-1, of one reward over the dataset, above its minimum (so the
    minimum is in bin 0 even when a mass of ties sits there)."""
    q = np.unique(np.quantile(values, np.arange(1, n_bins) / n_bins))
    return q[q > values.min()]


def quantile_bin(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """#{e_k <= v} / len(edges): the normalised bin of each value, in [0, 1], monotone non-decreasing in v."""
    return np.searchsorted(edges, values, side="right") / max(len(edges), 1)


def standardise(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """z = (v - mean(ref)) / std(ref): a reward in units of its spread over the dataset (unbounded, unlike a
    percentile, so samples outside the data's range are still ranked)."""
    return (values - reference.mean()) / reference.std()
