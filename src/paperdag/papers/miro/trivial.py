"""The strongest trivial generator of the scenes: a competence baseline for every trained generator.

The caption-mean image: for an evaluation caption, the pixel mean of the training images whose caption has the same
layout (scenes.canonical: axis, first and second object's colour and shape); the mean of every training image when
no training caption has that layout. It needs no training and no sampling; a generator whose GenEval accuracy does
not beat it has not learned more than the per-caption average.
"""

from __future__ import annotations

import numpy as np
import torch

from .scenes import canonical


def caption_mean_images(images: torch.Tensor, tokens: np.ndarray, prompts: np.ndarray) -> torch.Tensor:
    """One image per prompt (P x 3 x 16 x 16): the mean of the training images with the prompt's layout."""
    keys = [tuple(k) for k in canonical(tokens)]
    index: dict[tuple, list[int]] = {}
    for i, k in enumerate(keys):
        index.setdefault(k, []).append(i)
    fallback = images.mean(0)
    return torch.stack([images[index[k]].mean(0) if k in index else fallback
                        for k in (tuple(k) for k in canonical(prompts))])
