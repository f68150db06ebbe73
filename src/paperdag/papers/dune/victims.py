"""Victims: the same ConvNet trained from scratch on a (perturbed) training set under one defense, per seed (the
seeds and defenses of one training mode trained together, network.train_stacked).

A victim's score is its clean test accuracy (1/n) sum_j [argmax f(g(x_j)) = y_j] on the untouched test images,
passed through the same defense g; its training accuracy on g(x') shows that it fitted what it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .defenses import apply_defense
from .network import ConvNet, accuracy, train_stacked


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
    at_warmup: int


def train_victims(x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor,
                  runs: Sequence[tuple[str, int]], setup: VictimSetup, classes: int) -> list[tuple[float, float]]:
    """(clean test accuracy, training accuracy) of one victim per (defense, seed) in ``runs``, trained together
    (network.train_stacked; the runs must agree on adversarial training); every draw of a run is seeded by its seed."""
    adv = {d == "adv_train" for d, _ in runs}
    if len(adv) != 1:
        raise ValueError("stack adversarially trained victims separately from the others")
    inputs, models = [], []
    for defense, seed in runs:
        rng = np.random.default_rng(seed)
        gx_train = apply_defense(defense, x_train, setup.jpeg_quality, setup.noise_std, setup.blur_sigma, rng)
        gx_test = apply_defense(defense, x_test, setup.jpeg_quality, setup.noise_std, setup.blur_sigma, rng)
        inputs.append((gx_train, gx_test))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            models.append(ConvNet(x_train.shape[1], x_train.shape[-1], setup.width, classes).to(x_train.device))
    at = adv.pop()
    train_stacked(models, torch.stack([g for g, _ in inputs]), y_train, setup.epochs, setup.batch, setup.lr,
                  [torch.Generator().manual_seed(seed) for _, seed in runs], adv_eps=setup.at_eps if at else 0.0,
                  adv_steps=setup.at_steps if at else 0, adv_warmup=setup.at_warmup)
    return [(accuracy(m, gx_test, y_test), accuracy(m, gx_train, y_train))
            for m, (gx_train, gx_test) in zip(models, inputs, strict=True)]
