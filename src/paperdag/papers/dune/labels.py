"""Shift-induced labels: y' = (y + s) mod K, a bijection of the K classes with no fixed point when s != 0 mod K."""

from __future__ import annotations

import torch


def shift_labels(y: torch.Tensor, shift: int, classes: int) -> torch.Tensor:
    """y' = (y + s) mod K."""
    return (y + shift) % classes
