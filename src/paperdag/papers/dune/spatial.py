"""DUNE's spatial branch: sample-wise error-minimising noise toward shift-induced labels, against the ensemble.

delta_i = argmin_{||delta||_inf <= eps, x_i + delta in [0,1]^d} (1/M) sum_m CE(f_m(x_i + delta), y'_i),
y'_i = (y_i + s) mod K, solved by PGD (attacks.pgd) in batches; the surrogates stay fixed.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from .attacks import pgd


def spatial_noise(models: Sequence[nn.Module], x: torch.Tensor, targets: torch.Tensor, eps: float, steps: int,
                  batch: int, generator: torch.Generator) -> torch.Tensor:
    """The perturbed images x + delta (step size alpha = 2.5 eps / steps)."""
    out = [pgd(models, x[i:i + batch], targets[i:i + batch], eps, 2.5 * eps / steps, steps, minimise=True,
               generator=generator) for i in range(0, len(x), batch)]
    return torch.cat(out)
