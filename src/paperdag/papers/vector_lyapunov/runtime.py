"""What the science code gets from a stage besides data: a torch random generator and a curve logger."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

Log = Callable[[str, float, int], None]  # log(curve name, value, step), e.g. a stage's ctx.log_metric


def torch_generator(rng: np.random.Generator) -> torch.Generator:
    """A torch Generator seeded with one draw of ``rng`` (uniform on [0, 2^31))."""
    return torch.Generator().manual_seed(int(rng.integers(2**31)))
