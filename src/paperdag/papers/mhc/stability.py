"""Spikes in a training curve: steps far above the trailing median of the same curve.

    spike at t  <=>  v_t > factor * median(v_{t-w}, ..., v_{t-1}),   t > w,

applied to the pre-clip gradient norm (factor ``grad_factor``) and to the training loss (``loss_factor``).
"""

from __future__ import annotations

import numpy as np


def spike_steps(values: np.ndarray, window: int, factor: float) -> np.ndarray:
    """Indices t >= window with values[t] > factor * median(values[t - window : t])."""
    v = np.asarray(values, dtype=float)
    if len(v) <= window:
        return np.zeros(0, dtype=int)
    trailing = np.lib.stride_tricks.sliding_window_view(v[:-1], window)  # row i: v[i : i + window]
    ref = np.median(trailing, axis=1)
    return window + np.flatnonzero(v[window:] > factor * ref)
