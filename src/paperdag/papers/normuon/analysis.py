"""Pure functions over training curves: steps to a target loss, step reductions, seed statistics."""

from __future__ import annotations

import math

import numpy as np


def steps_to_target(steps: list[int], losses: list[float], target: float) -> float:
    """First step at which the validation loss reaches ``target`` (<=), linearly interpolated between the two
    evaluations that bracket the crossing: s = s_{i-1} + (l_{i-1} - target) / (l_{i-1} - l_i) (s_i - s_{i-1}).
    ``inf`` when the curve never reaches the target.
    """
    for i, loss in enumerate(losses):
        if loss <= target:
            if i == 0:
                return float(steps[0])
            frac = (losses[i - 1] - target) / (losses[i - 1] - loss)
            return float(steps[i - 1] + frac * (steps[i] - steps[i - 1]))
    return math.inf


def step_reduction(steps_opt: float, steps_ref: float) -> float:
    """Fraction of the reference's steps saved: 1 - steps_opt / steps_ref (-inf when the optimizer never arrives)."""
    return 1.0 - steps_opt / steps_ref


def seed_stats(values: list[float]) -> dict[str, float | None]:
    """Mean, sample standard deviation (ddof = 1), min and max over seeds; ``None`` for non-finite entries."""
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)):
        return {"mean": None, "std": None, "min": None, "max": None}
    return {"mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
            "min": float(arr.min()), "max": float(arr.max())}  # fmt: skip


def finite_or_none(values: list[float]) -> list[float | None]:
    """JSON-safe copy: non-finite numbers (a target never reached) become ``None``."""
    return [float(v) if math.isfinite(v) else None for v in values]
