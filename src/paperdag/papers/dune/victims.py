"""Victims: the same ConvNet trained from scratch on a (perturbed) training set under one defense, per seed.

A victim's score is its clean test accuracy (1/n) sum_j [argmax f(g(x_j)) = y_j] on the untouched test images,
passed through the same defense g; its training accuracy on g(x') shows that it fitted what it was given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .defenses import apply_defense
from .network import ConvNet, accuracy, train_classifier


@dataclass(frozen=True)
class VictimSetup:
    """Network and training budget shared by every victim, and the defense settings."""

    width: int
    epochs: int
    batch: int
    lr: float
    jpeg_quality: int
    noise_std: float
    blur_sigma: float
    at_eps: float
    at_steps: int


def train_victim(x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor,
                 defense: str, setup: VictimSetup, seed: int, classes: int) -> tuple[float, float]:
    """(clean test accuracy, training accuracy) of one victim; every draw is seeded by ``seed``."""
    rng = np.random.default_rng(seed)
    gx_train = apply_defense(defense, x_train, setup.jpeg_quality, setup.noise_std, setup.blur_sigma, rng)
    gx_test = apply_defense(defense, x_test, setup.jpeg_quality, setup.noise_std, setup.blur_sigma, rng)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = ConvNet(x_train.shape[1], x_train.shape[-1], setup.width, classes).to(x_train.device)
    adv = defense == "adv_train"
    train_classifier(model, gx_train, y_train, setup.epochs, setup.batch, setup.lr,
                     torch.Generator().manual_seed(seed), adv_eps=setup.at_eps if adv else 0.0,
                     adv_steps=setup.at_steps if adv else 0)
    return accuracy(model, gx_test, y_test), accuracy(model, gx_train, y_train)
