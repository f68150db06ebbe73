"""The trivial classifiers of the coloured digits: the baseline ladder every trained model must beat.

Each rung is fitted on the first ``1 - valid_frac`` of the training images, its hyper-parameter chosen on the rest
(``paperdag.common.baselines.classifiers``), and scored per clean test image (1 correct, 0 not):

- k-NN and multinomial logistic regression on the raw RGB pixels (the ladder of ``../shared/papers.md`` for
  classifiers and victims);
- the same two on per-image standardised luminance z(x) = (Y - mean(Y)) / std(Y), Y the mean of the RGB channels:
  a fixed per-image normalisation (no learning) that removes the random grey level and colours of data.py, which
  raw-pixel distances cannot;
- the nearest class mean of z (argmin_k ||z(x) - mu_k||_2, mu_k the mean of z over class k's training images).

No rung learns beyond counting, lookup or a convex fit on the inputs; the strongest is the competence bar.
"""

from __future__ import annotations

import numpy as np
import torch

from paperdag.common.baselines.classifiers import knn, logistic

NEAREST_MEAN = "nearest class mean of standardised luminance"


def standardised_luminance(x: torch.Tensor) -> torch.Tensor:
    """z(x) (n x H W): each image's luminance minus its mean, over its standard deviation."""
    y = x.mean(1).flatten(1)
    y = y - y.mean(1, keepdim=True)
    return y / y.std(1, keepdim=True).clamp(min=1e-8)


def nearest_class_mean(x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor,
                       classes: int) -> np.ndarray:
    """Per test image, 1 if argmin_k ||z(x) - mu_k|| is its label (mu_k: class means of z over the training
    images), else 0."""
    z_train, z_test = standardised_luminance(x_train), standardised_luminance(x_test)
    means = torch.stack([z_train[y_train == k].mean(0) for k in range(classes)])
    return (torch.cdist(z_test, means).argmin(1) == y_test).double().numpy()


def ladder(x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor, classes: int,
           ks: tuple[int, ...], cs: tuple[float, ...], valid_frac: float) -> dict[str, dict]:
    """Every rung (module docstring) by name: {"correct": per-test-image 0/1, "chosen": its hyper-parameter,
    "valid_score": its validation accuracy (None for the nearest class mean, which has none to choose)}."""
    fit = len(x_train) - round(valid_frac * len(x_train))
    inputs = {"raw RGB pixels": lambda x: x.flatten(1).numpy(), "standardised luminance":
              lambda x: standardised_luminance(x).numpy()}
    y_tr, y_te = y_train.numpy(), y_test.numpy()
    rungs = {}
    for where, features in inputs.items():
        a, b = features(x_train), features(x_test)
        split = (a[:fit], y_tr[:fit], a[fit:], y_tr[fit:], b, y_te)
        near, linear = knn(*split, ks=ks), logistic(*split, cs=cs)
        rungs[f"{near.chosen['k']}-NN on {where}"] = {"correct": near.test_correct, "chosen": near.chosen,
                                                      "valid_score": near.valid_score}
        rungs[f"logistic regression (C={linear.chosen['C']:g}) on {where}"] = {
            "correct": linear.test_correct, "chosen": linear.chosen, "valid_score": linear.valid_score}
    rungs[NEAREST_MEAN] = {"correct": nearest_class_mean(x_train, y_train, x_test, y_test, classes), "chosen": {},
                           "valid_score": None}
    return rungs
