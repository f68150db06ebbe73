"""What the preconditions measure beyond the generators' scores: whether the data has natural-image statistics, and
how often the angular and the Euclidean minibatch couplings pair a noise batch with a data batch alike.

Saturation: in the generators' scale x = 2 p - 1 the squared norm is ||x||^2 = d - 4 sum_j p_j (1 - p_j), so every
pixel at exactly 0 or 1 adds exactly 1 whatever the image shows. The fraction of such pixels is the share of the norm
fixed by this identity (74% of MNIST's pixels; natural photographs have few saturated pixels).

Coupling agreement: for a noise batch x0 ~ N(0, I) and a training batch x1 of the flows' batch size, the fraction of
data points j whose OT partner sigma(j) is the same under the squared-Euclidean (OT-CFM) and the angular (SOT-CFM)
cost (coupling.py), over independent batches.
"""

from __future__ import annotations

import numpy as np
import torch

from .coupling import ot_permutation


def saturated_fraction(pixels: np.ndarray) -> float:
    """Fraction of the pixels (in [0, 1]) that are exactly 0 or exactly 1."""
    return float(((pixels == 0) | (pixels == 1)).mean())


def coupling_agreement(data: torch.Tensor, batch: int, n_batches: int, gen: torch.Generator) -> tuple[int, int]:
    """(pairs with the same OT partner under both costs, pairs compared) over ``n_batches`` batches (see the
    module); ``data`` rows in the generators' scale."""
    same = 0
    for _ in range(n_batches):
        x1 = data[torch.randint(len(data), (batch,), generator=gen)]
        x0 = torch.randn(batch, data.shape[1], generator=gen, dtype=data.dtype)
        same += int((ot_permutation(x0, x1, "euclidean") == ot_permutation(x0, x1, "angular")).sum())
    return same, batch * n_batches
