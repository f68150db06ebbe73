"""The paper's observation: the semantics of an image live in its direction x / ||x||, its norm ||x|| is nearly the
global mean.

Measured as (i) the coefficient of variation of the norms, CV = sd(||x||) / mean(||x||), and (ii) the test accuracy of
one classifier recipe trained and tested on each representation of the same images:
    original   x
    direction  R x / ||x||       (projection to the sphere of radius R = mean training norm)
    norm       (||x|| - m) / s   (the norm alone, standardised by its training mean m and sd s)
against chance, the frequency of the most common test label.
"""

from __future__ import annotations

import numpy as np
import torch

REPRESENTATIONS = ("original", "direction", "norm")
LABELLED = "skimage"  # the judged labels' dataset: scikit-image crops labelled by image (labelled.py)


def norm_cv(X: np.ndarray) -> float:
    """sd(||x_i||) / mean(||x_i||) over the rows."""
    norms = np.linalg.norm(X, axis=1)
    return float(norms.std() / norms.mean())


def represent(X_train: torch.Tensor, X_test: torch.Tensor, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, test) in representation ``kind`` (see the module); R, m and s come from the training rows."""
    n_train, n_test = X_train.norm(dim=1, keepdim=True), X_test.norm(dim=1, keepdim=True)
    if kind == "original":
        return X_train, X_test
    if kind == "direction":
        R = n_train.mean()
        return R * X_train / n_train, R * X_test / n_test
    if kind == "norm":
        m, s = n_train.mean(), n_train.std()
        return (n_train - m) / s, (n_test - m) / s
    raise ValueError(f"unknown representation {kind!r} (known: {REPRESENTATIONS})")


def chance(y: np.ndarray) -> float:
    """Accuracy of always predicting the most frequent label: max_c (1/n) #{i : y_i = c}."""
    return float(np.bincount(y).max() / len(y))
