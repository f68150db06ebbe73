"""The few array operations the DSL and the enumeration need, on numpy arrays (the CPU path) or torch tensors (the
GPU path): one function per operation, dispatching on the argument's type. ``on_device`` picks the library from
the stage's device: "cpu" -> numpy, "cuda[:i]" -> torch on that device, "torch:<device>" -> torch (e.g. torch:cpu).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

Array = Any  # np.ndarray | torch.Tensor


def _is_torch(x: Array) -> bool:
    return type(x).__module__.startswith("torch")


def on_device(x: np.ndarray, device: str) -> Array:
    """``x`` as a numpy array for device "cpu", else as a torch tensor on the device."""
    if device == "cpu":
        return x
    import torch

    return torch.as_tensor(np.ascontiguousarray(x), device=device.removeprefix("torch:"))


def to_numpy(x: Array) -> np.ndarray:
    """A numpy copy of ``x`` (host memory)."""
    return x.detach().cpu().numpy() if _is_torch(x) else np.asarray(x)


def flip(x: Array, axis: int) -> Array:
    """y[..., i, ...] = x[..., n - 1 - i, ...] along ``axis``."""
    return x.flip(axis) if _is_torch(x) else np.flip(x, axis=axis)


def roll(x: Array, shift: int, axis: int) -> Array:
    """Cyclic shift: y[..., i, ...] = x[..., (i - shift) mod n, ...]."""
    return x.roll(shift, axis) if _is_torch(x) else np.roll(x, shift, axis=axis)


def rot90(x: Array, k: int) -> Array:
    """k quarter turns counter-clockwise in the last two axes."""
    return x.rot90(k, (-2, -1)) if _is_torch(x) else np.rot90(x, k, axes=(-2, -1))


def take(x: Array, order: np.ndarray, axis: int) -> Array:
    """y[..., i, ...] = x[..., order[i], ...] along ``axis``."""
    if _is_torch(x):
        import torch

        return x.index_select(axis % x.ndim, torch.as_tensor(order, device=x.device))
    return np.take(x, order, axis=axis)


def permute_last(x: Array, perm: Sequence[int]) -> Array:
    """Permute the last len(perm) axes: output axis j is input axis perm[j] (counted from the first grid axis)."""
    lead = x.ndim - len(perm)
    axes = (*range(lead), *(lead + p for p in perm))
    return x.permute(*axes) if _is_torch(x) else x.transpose(*axes)


def sort_last(x: Array) -> Array:
    """Sorted along the last axis."""
    return x.sort(-1).values if _is_torch(x) else np.sort(x, axis=-1)


def cummax_last(x: Array) -> Array:
    """Running maximum along the last axis."""
    return x.cummax(-1).values if _is_torch(x) else np.maximum.accumulate(x, axis=-1)


def replace_value(x: Array, old: int, new: int) -> Array:
    """Every cell equal to ``old`` set to ``new``."""
    y = x.clone() if _is_torch(x) else x.copy()
    y[x == old] = new
    return y


def smear_first(x: Array) -> Array:
    """Cell 0 of the last axis overwritten by cell 1 (the identity on an axis of length 1, which an axis permutation
    of a small exhaustive grid can put last: the random property grids catch the loss there)."""
    y = x.clone() if _is_torch(x) else x.copy()
    if x.shape[-1] > 1:
        y[..., 0] = x[..., 1]
    return y


def concat(xs: Sequence[Array]) -> Array:
    """Concatenation along the first axis."""
    if _is_torch(xs[0]):
        import torch

        return torch.cat(list(xs))
    return np.concatenate(xs)


def rows_equal(a: Array, b: Array) -> np.ndarray:
    """For each leading index n: whether a[n] equals b cellwise (b broadcasts); a numpy bool vector."""
    return to_numpy((a == b).reshape(len(a), -1).all(1))


def select(x: Array, mask: np.ndarray) -> Array:
    """The rows of ``x`` where the numpy bool vector ``mask`` is true."""
    if _is_torch(x):
        import torch

        return x[torch.as_tensor(mask, device=x.device)]
    return x[mask]
