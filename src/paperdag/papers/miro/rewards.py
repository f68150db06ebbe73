"""The reward models (no pretrained networks) and their quantile binning. Every reward is higher-is-better.

  alignment   = mean_h p_det(attribute_h named by the caption | x), the detector's probability (detector.py);
  composition = (1/3)[colour A present] + (1/3)[colour B present] + (1/3)[centroid order of A, B matches the
                relation], a hand-written checker: a pixel belongs to colour c when its nearest palette entry
                (background included) is c, a colour is present with >= ``min_pixels`` pixels;
  sharpness   = Var(Lap * Y), the variance of the 4-neighbour Laplacian of the luminance Y = mean of RGB;
  aesthetic   = std(Y) + mean(max_c x - min_c x), contrast plus saturation;
  noise       = -median|Lap * Y|, minus a robust noise level (flat regions of a clean render have Lap = 0).
Quantile binning over the dataset: edges e = unique quantiles q_{k/K}, k = 1..K-1, of the reward;
bin(v) = #{e_k <= v} (edges above the minimum only), normalised by the number of distinct bins to [0, 1]
(monotone; the minimum is in bin 0 and the maximum in bin 1).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .detector import Detector, attribute_probs
from .scenes import BACKGROUND, COLOURS

REWARDS = ("alignment", "composition", "sharpness", "aesthetic", "noise")
LAPLACE = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])


def laplacian(x: Tensor) -> Tensor:
    """Lap * Y (n x 14 x 14, valid convolution) of the luminance Y of images x (n x 3 x 16 x 16)."""
    y = x.mean(1, keepdim=True)
    return torch.nn.functional.conv2d(y, LAPLACE.to(x)[None, None])[:, 0]


def sharpness(x: Tensor) -> Tensor:
    """Var(Lap * Y) per image."""
    return laplacian(x).flatten(1).var(1)


def noise(x: Tensor) -> Tensor:
    """-median |Lap * Y| per image."""
    return -laplacian(x).abs().flatten(1).median(1).values


def aesthetic(x: Tensor) -> Tensor:
    """std(Y) + mean over pixels of (max_c x_c - min_c x_c)."""
    return x.mean(1).flatten(1).std(1) + (x.max(1).values - x.min(1).values).flatten(1).mean(1)


def composition(x: Tensor, tokens: np.ndarray, min_pixels: int) -> Tensor:
    """The hand-written checker of the module docstring, in {0, 1/3, 2/3, 1}."""
    palette = torch.tensor([[BACKGROUND] * 3, *COLOURS.values()], dtype=x.dtype, device=x.device)
    nearest = ((x[:, None] - palette[None, :, :, None, None]) ** 2).sum(2).argmin(1)  # n x 16 x 16, 0 = background
    t = torch.as_tensor(np.asarray(tokens).reshape(-1, 5), device=x.device)
    grid = torch.arange(16, dtype=x.dtype, device=x.device)
    present, centre = [], []
    for slot in (0, 3):
        mask = (nearest == t[:, slot, None, None]).to(x.dtype)
        count = mask.flatten(1).sum(1)
        present.append(count >= min_pixels)
        rows = (mask.sum(2) * grid).sum(1) / count.clamp(min=1)
        cols = (mask.sum(1) * grid).sum(1) / count.clamp(min=1)
        centre.append(torch.stack([rows, cols], 1))
    axis = (t[:, 2] >= 3).long()  # relation tokens 3, 4 (above, below) compare rows, 1, 2 compare columns
    d = (centre[1] - centre[0]).gather(1, (1 - axis)[:, None])[:, 0]  # B minus A along the relation axis
    a_first = (t[:, 2] == 1) | (t[:, 2] == 3)  # "left of", "above": A before B
    order = torch.where(a_first, d > 0, d < 0) & present[0] & present[1]
    return (present[0].to(x.dtype) + present[1].to(x.dtype) + order.to(x.dtype)) / 3


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
