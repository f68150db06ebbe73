"""From the checkpoint tables of every method to the numbers the claims compare.

finals[method][key] = per-seed values of score ``key`` at the last checkpoint (seeds in a shared order, so
differences are paired); curve(method, key) = (checkpoint steps, mean over seeds); speed-up of MIRO over a
baseline b = T / s*, with T the last step and s* the first checkpoint at which MIRO's mean curve reaches b's mean
final value (evaluation.steps_to_reach; 0 when it never does). The checkpoint grid bounds the measurable speed-up
by the number of checkpoints.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paperdag.common.stats import mean_ci

from .evaluation import steps_to_reach


def _rows(curves: pa.Table, method: str) -> pa.Table:
    return curves.filter(pc.equal(curves["method"], method)).sort_by([("seed", "ascending"), ("step", "ascending")])


def finals(curves: pa.Table, methods: tuple[str, ...]) -> dict[str, dict[str, np.ndarray]]:
    """Per method, per score: the per-seed values at the last checkpoint (seed order ascending)."""
    out = {}
    last = pc.max(curves["step"]).as_py()
    for m in methods:
        t = _rows(curves, m)
        t = t.filter(pc.equal(t["step"], last))
        out[m] = {c: t[c].to_numpy() for c in t.column_names if c not in ("method", "seed", "step")}
    return out


def curve(curves: pa.Table, method: str, key: str) -> tuple[np.ndarray, np.ndarray]:
    """(steps, mean over seeds of ``key`` at each step) of one method."""
    t = _rows(curves, method).group_by("step").aggregate([(key, "mean")]).sort_by("step")
    return t["step"].to_numpy(), t[f"{key}_mean"].to_numpy()


def speedups(curves: pa.Table, baselines: tuple[str, ...], key: str) -> dict[str, float]:
    """T / s* of MIRO over each baseline on score ``key`` (0 if MIRO never reaches the baseline's final mean)."""
    steps, miro = curve(curves, "miro", key)
    out = {}
    for b in baselines:
        reached = steps_to_reach(steps, miro, float(curve(curves, b, key)[1][-1]))
        out[b] = float(steps[-1] / reached) if reached else 0.0
    return out


def is_monotone(values: np.ndarray, tol: float) -> bool:
    """v_{l+1} >= v_l - tol for consecutive target levels, and v_last > v_first."""
    return bool(np.all(np.diff(values) >= -tol) and values[-1] > values[0])


def curve_bands(curves: pa.Table, methods: list[str], keys: tuple[str, ...],
                confidence: float) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Per score, per method: (steps, mean over seeds, half-width of the across-seed t-interval) at each step."""
    out: dict[str, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    for key in keys:
        out[key] = {}
        for m in methods:
            rows = _rows(curves, m)
            steps = np.unique(rows["step"].to_numpy())
            cis = [mean_ci(rows.filter(pc.equal(rows["step"], int(s)))[key].to_numpy(), confidence) for s in steps]
            out[key][m] = (steps, np.array([c.mean for c in cis]), np.array([c.hi - c.mean for c in cis]))
    return out
