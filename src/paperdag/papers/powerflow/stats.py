"""Training curves across seeds (the claims' intervals are the shared ones of ``paperdag.common.stats``)."""

from __future__ import annotations

import numpy as np


def spread_by_step(step: np.ndarray, value: np.ndarray) -> dict[str, np.ndarray]:
    """Per distinct step: mean, min and max of ``value`` over the runs (seeds) logged at it."""
    steps = np.unique(step)
    rows = [value[step == s] for s in steps]
    return {"step": steps, "mean": np.array([r.mean() for r in rows]), "min": np.array([r.min() for r in rows]),
            "max": np.array([r.max() for r in rows])}
