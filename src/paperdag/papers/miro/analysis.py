"""From the checkpoint tables of every method to the numbers the claims compare.

finals[method][key] = per-seed values of score ``key`` at the last checkpoint (seeds in a shared order, so
differences are paired); curve(method, key) = (checkpoint steps, mean over seeds); speed-up of MIRO over a
baseline b = T / s*, with T the last step and s* the first checkpoint at which MIRO's mean curve reaches b's mean
final value (evaluation.steps_to_reach; 0 when it never does); the per-seed speed-up does the same with MIRO's and
b's curves of one seed. The checkpoint grid bounds the measurable speed-up by the number of checkpoints.

Regime numbers: the controllability rise of one seed is the least-squares slope of the reward against its target
level (levels span [0, 1], so the slope is the fitted rise from the lowest to the top level), in units of the
reward's std over the training data; a corruption's reward gap is clean minus corrupted rows of the training data
(rows with no corruption against rows with that corruption alone) with its Welch t-interval.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from scipy import stats

from paperdag.common.stats import Interval, mean_ci

from .evaluation import steps_to_reach

CAPTION_BLIND = ("blur", "noise", "dull")  # an image-only reward cannot see a caption mismatch (tied by construction)
OBSERVES = {"alignment": ("mismatch", *CAPTION_BLIND), "composition": ("mismatch", *CAPTION_BLIND),
            "sharpness": CAPTION_BLIND, "aesthetic": CAPTION_BLIND, "noise": CAPTION_BLIND}


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


def seed_speedups(curves: pa.Table, baselines: tuple[str, ...], key: str) -> dict[str, np.ndarray]:
    """Per baseline b, per seed (ascending): T / s* of MIRO's curve of that seed over b's final value of that seed
    (0 if never reached)."""
    miro = _rows(curves, "miro")
    out = {}
    for b in baselines:
        base, values = _rows(curves, b), []
        for seed in np.unique(miro["seed"].to_numpy()):
            mine = miro.filter(pc.equal(miro["seed"], seed))
            theirs = base.filter(pc.equal(base["seed"], seed))
            steps = mine["step"].to_numpy()
            reached = steps_to_reach(steps, mine[key].to_numpy(), float(theirs[key].to_numpy()[-1]))
            values.append(float(steps[-1] / reached) if reached else 0.0)
        out[b] = np.array(values)
    return out


def fitted_rise(levels: np.ndarray, values: np.ndarray, scale: float) -> np.ndarray:
    """Per seed (rows of ``values``, seeds x levels): the least-squares slope of the reward against its target
    level, divided by ``scale`` (the reward's std over the training data)."""
    centred = levels - levels.mean()
    return (values - values.mean(1, keepdims=True)) @ centred / (centred @ centred) / scale


def welch_ci(a: np.ndarray, b: np.ndarray, confidence: float) -> Interval:
    """mean(a) - mean(b) with its Welch t-interval (unequal variances, Welch-Satterthwaite degrees of freedom);
    n = the smaller sample, for the power rule; an interval of NaNs (judged inconclusive) below 2 values a side."""
    if min(len(a), len(b)) < 2:
        return Interval(float("nan"), float("nan"), float("nan"), int(min(len(a), len(b))), confidence)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = np.sqrt(va + vb)
    dof = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1)) if se > 0 else 1.0
    half = float(stats.t.ppf((1 + confidence) / 2, dof) * se)
    diff = float(a.mean() - b.mean())
    return Interval(diff, diff - half, diff + half, int(min(len(a), len(b))), confidence)


def corruption_gaps(rewards: np.ndarray, flags: np.ndarray, observes: dict[str, tuple[str, ...]],
                    reward_names: tuple[str, ...], corruptions: tuple[str, ...],
                    confidence: float) -> dict[str, dict[str, Interval]]:
    """Per reward r, per corruption k that r observes: clean rows (no corruption) minus rows with k alone, of r."""
    clean = ~flags.any(1)
    out: dict[str, dict[str, Interval]] = {}
    for j, r in enumerate(reward_names):
        out[r] = {}
        for k, kind in enumerate(corruptions):
            alone = flags[:, k] & (flags.sum(1) == 1)
            if kind in observes[r]:
                out[r][kind] = welch_ci(rewards[clean, j], rewards[alone, j], confidence)
    return out


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
