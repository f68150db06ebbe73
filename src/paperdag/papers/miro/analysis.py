"""From the checkpoint tables of every method to the numbers the claims compare.

The speed-up of MIRO over a
baseline b in one seed = T / s*, with T the last step and s* the first checkpoint at which MIRO's curve of that seed
reaches b's final value of that seed (evaluation.steps_to_reach; 0 when it never does), on the aggregate or on one
reward at a time. The checkpoint grid bounds the measurable speed-up by the number of checkpoints.

Regime numbers: the controllability rise of one seed is the least-squares slope of the reward against its target
level (levels span [0, 1], so the slope is the fitted rise from the lowest to the top level), in units of the
reward's std over the training data; a corruption's reward gap is the held-out clean render's reward minus the
reward of the same render with that corruption alone, with its paired t-interval.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci

from .evaluation import steps_to_reach

CAPTION_BLIND = ("blur", "noise", "dull")  # an image-only reward cannot see a caption mismatch (tied by construction)
OBSERVES = {"alignment": ("mismatch", *CAPTION_BLIND), "composition": ("mismatch", *CAPTION_BLIND),
            "sharpness": CAPTION_BLIND, "aesthetic": CAPTION_BLIND, "noise": CAPTION_BLIND}


def _rows(curves: pa.Table, method: str) -> pa.Table:
    return curves.filter(pc.equal(curves["method"], method)).sort_by([("seed", "ascending"), ("step", "ascending")])


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


def corruption_gaps(sanity: np.ndarray, observes: dict[str, tuple[str, ...]], reward_names: tuple[str, ...],
                    corruptions: tuple[str, ...], confidence: float) -> dict[str, dict[str, Interval]]:
    """Per reward r, per corruption k that r observes: the paired interval of r(clean) - r(clean with k alone) over
    held-out renders (unit ``render``); ``sanity[0]`` the clean renders' rewards, ``sanity[1 + k]`` the corrupted
    ones' (n x R)."""
    return {r: {kind: paired_diff_ci(sanity[0][:, j], sanity[1 + k][:, j], confidence, unit="render")
                for k, kind in enumerate(corruptions) if kind in observes[r]} for j, r in enumerate(reward_names)}


def curve_bands(curves: pa.Table, methods: list[str], keys: tuple[str, ...],
                confidence: float) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Per score, per method: (steps, mean over seeds, half-width of the across-seed t-interval) at each step."""
    out: dict[str, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    for key in keys:
        out[key] = {}
        for m in methods:
            rows = _rows(curves, m)
            steps = np.unique(rows["step"].to_numpy())
            cis = [mean_ci(rows.filter(pc.equal(rows["step"], int(s)))[key].to_numpy(), confidence, unit="seed")
                   for s in steps]
            out[key][m] = (steps, np.array([c.mean for c in cis]), np.array([c.hi - c.mean for c in cis]))
    return out
