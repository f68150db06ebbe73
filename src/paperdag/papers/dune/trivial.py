"""The strongest trivial classifier of the coloured digits: a competence baseline for every trained model.

Nearest class mean on per-image standardised luminance: z(x) = (Y - mean(Y)) / std(Y) with Y the mean of the RGB
channels, mu_k = mean of z over the training images of class k, prediction argmin_k ||z(x) - mu_k||_2. The per-image
standardisation removes the random background / stroke colours (data.py), which raw-pixel class means cannot.
"""

from __future__ import annotations

import torch


def standardised_luminance(x: torch.Tensor) -> torch.Tensor:
    """z(x) (n x H W): each image's luminance minus its mean, over its standard deviation."""
    y = x.mean(1).flatten(1)
    y = y - y.mean(1, keepdim=True)
    return y / y.std(1, keepdim=True).clamp(min=1e-8)


def nearest_class_mean_accuracy(x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor,
                                y_test: torch.Tensor, classes: int) -> float:
    """Test accuracy of argmin_k ||z(x) - mu_k|| with mu_k the class means of z over the training images."""
    z_train, z_test = standardised_luminance(x_train), standardised_luminance(x_test)
    means = torch.stack([z_train[y_train == k].mean(0) for k in range(classes)])
    return float((torch.cdist(z_test, means).argmin(1) == y_test).double().mean())
